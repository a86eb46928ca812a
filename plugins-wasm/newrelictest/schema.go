package newrelictest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// fieldDef is one field of an object type: its GraphQL type and arguments.
type fieldDef struct {
	Type string
	Args map[string]string
}

// objectTypes is the part of NerdGraph's schema the fake serves, with the
// field and argument names and types NerdGraph documents.
var objectTypes = map[string]map[string]fieldDef{
	"Query":    {"actor": {Type: "Actor"}},
	"Mutation": {"changeTrackingCreateDeployment": {Type: "ChangeTrackingDeployment", Args: map[string]string{"deployment": "ChangeTrackingDeploymentInput!", "dataHandlingRules": "ChangeTrackingDataHandlingRules"}}, "taggingDeleteTagFromEntity": {Type: "TaggingMutationResult", Args: map[string]string{"guid": "EntityGuid!", "tagKeys": "[String!]!"}}},
	"Actor": {
		"user":     {Type: "User"},
		"accounts": {Type: "[AccountOutline]", Args: map[string]string{"scope": "RegionScope"}},
		"account":  {Type: "Account", Args: map[string]string{"id": "Int!"}},
		"entity":   {Type: "Entity", Args: map[string]string{"guid": "EntityGuid!"}},
		"entitySearch": {Type: "EntitySearch", Args: map[string]string{
			"query": "String", "queryBuilder": "EntitySearchQueryBuilder", "options": "EntitySearchOptions", "sortBy": "[EntitySearchSortCriteria]",
		}},
	},
	"User":           {"id": {Type: "Int"}, "name": {Type: "String"}, "email": {Type: "String"}},
	"AccountOutline": {"id": {Type: "Int"}, "name": {Type: "String"}, "reportingEventTypes": {Type: "[String]"}},
	"Account": {
		"id":       {Type: "Int"},
		"name":     {Type: "String"},
		"nrql":     {Type: "NrdbResultContainer", Args: map[string]string{"query": "Nrql!", "timeout": "Seconds", "async": "Boolean", "options": "NrqlQueryOptions"}},
		"aiIssues": {Type: "AiIssuesAccountStitchedFields"},
	},
	"NrdbResultContainer": {"results": {Type: "[NrdbResult]"}, "metadata": {Type: "NrdbMetadata"}, "nrql": {Type: "Nrql"}},
	"NrdbMetadata":        {"eventTypes": {Type: "[String]"}, "facets": {Type: "[String]"}, "timeWindow": {Type: "NrdbMetadataTimeWindow"}},
	"NrdbMetadataTimeWindow": {
		"begin": {Type: "EpochMilliseconds"}, "end": {Type: "EpochMilliseconds"}, "compareWith": {Type: "String"}, "since": {Type: "String"}, "until": {Type: "String"},
	},
	"AiIssuesAccountStitchedFields": {
		"issues":    {Type: "AiIssuesIssueData", Args: map[string]string{"cursor": "String", "filter": "AiIssuesFilterIssues", "timeWindow": "AiIssuesTimeWindowInput"}},
		"incidents": {Type: "AiIssuesIncidentData", Args: map[string]string{"cursor": "String", "filter": "AiIssuesFilterIncidents", "timeWindow": "AiIssuesTimeWindowInput"}},
	},
	"AiIssuesIssueData":    {"issues": {Type: "[AiIssuesIssue]"}, "nextCursor": {Type: "String"}},
	"AiIssuesIncidentData": {"incidents": {Type: "[AiIssuesIIncident]"}, "nextCursor": {Type: "String"}},
	"AiIssuesIssue": fields("issueId:ID!", "title:[String!]!", "priority:String!", "state:String!", "sources:[String!]!",
		"entityGuids:[EntityGuid!]", "entityNames:[String!]", "entityTypes:[String!]", "conditionName:[String!]", "policyName:[String!]",
		"accountIds:[Int!]!", "description:[String!]!", "incidentIds:[String!]", "createdAt:EpochMilliseconds!", "activatedAt:EpochMilliseconds",
		"closedAt:EpochMilliseconds", "updatedAt:EpochMilliseconds!", "acknowledgedAt:EpochMilliseconds", "acknowledgedBy:String", "totalIncidents:Int!"),
	"AiIssuesIIncident": fields("incidentId:ID!", "title:String", "description:[String!]!", "priority:String!", "state:String!",
		"accountIds:[Int!]!", "entityGuids:EntityGuid", "entityNames:String", "entityTypes:String", "environmentId:Int!",
		"createdAt:EpochMilliseconds!", "closedAt:EpochMilliseconds", "updatedAt:EpochMilliseconds!"),
	"EntitySearch":       {"count": {Type: "Int"}, "query": {Type: "String"}, "results": {Type: "EntitySearchResult", Args: map[string]string{"cursor": "String"}}},
	"EntitySearchResult": {"entities": {Type: "[EntityOutline]!"}, "nextCursor": {Type: "String"}},
	"EntityOutline":      entityFields(),
	"Entity":             entityFields(),
	"DashboardEntityOutline": merge(entityFields(), fields("createdAt:DateTime", "updatedAt:DateTime", "dashboardParentGuid:EntityGuid",
		"permissions:DashboardPermissions", "owner:DashboardOwnerInfo")),
	"DashboardOwnerInfo":       fields("email:String", "userId:Int"),
	"EntityTag":                fields("key:String", "values:[String]"),
	"ChangeTrackingDeployment": fields("deploymentId:String", "entityGuid:EntityGuid!", "timestamp:EpochMilliseconds!", "version:String!", "changelog:String", "commit:String", "deepLink:String", "description:String", "user:String", "deploymentType:ChangeTrackingDeploymentType", "groupId:String"),
	"TaggingMutationResult":    {"errors": {Type: "[TaggingMutationError]"}},
	"TaggingMutationError":     fields("message:String", "type:TaggingMutationErrorType"),
}

// implements lists the interfaces an object type implements.
var implements = map[string][]string{"DashboardEntityOutline": {"EntityOutline"}}

// enumTypes are the enums the fake checks values of.
var enumTypes = map[string][]string{
	"AiIssuesIssueState":             {"ACTIVATED", "CLOSED", "CREATED", "DEACTIVATED"},
	"EntitySearchQueryBuilderType":   {"APPLICATION", "BROWSER_APPLICATION", "DASHBOARD", "HOST", "MOBILE_APPLICATION", "SERVICE_LEVEL", "WORKLOAD"},
	"EntitySearchQueryBuilderDomain": {"APM", "BROWSER", "EXT", "INFRA", "MOBILE", "SYNTH", "VIZ"},
	"ChangeTrackingDeploymentType":   {"BASIC", "BLUE_GREEN", "CANARY", "OTHER", "ROLLING", "SHADOW"},
	"RegionScope":                    {"GLOBAL", "IN_REGION"},
}

// inputTypes are the input objects the fake checks: field name to type.
var inputTypes = map[string]map[string]string{
	"AiIssuesFilterIssues":    {"states": "[AiIssuesIssueState!]", "priority": "String", "entityGuids": "[EntityGuid!]", "issueIds": "[ID!]"},
	"AiIssuesFilterIncidents": {"states": "[String!]", "priority": "String", "entityGuids": "[EntityGuid!]", "incidentIds": "[ID!]"},
	"AiIssuesTimeWindowInput": {"startTime": "EpochMilliseconds!", "endTime": "EpochMilliseconds!"},
	"EntitySearchQueryBuilder": {"type": "EntitySearchQueryBuilderType", "domain": "EntitySearchQueryBuilderDomain", "name": "String",
		"reporting": "Boolean", "tags": "[EntitySearchQueryBuilderTag]"},
	"EntitySearchQueryBuilderTag": {"key": "String!", "value": "String!"},
	"ChangeTrackingDeploymentInput": {"entityGuid": "EntityGuid!", "version": "String!", "changelog": "String", "commit": "String",
		"deepLink": "String", "deploymentType": "ChangeTrackingDeploymentType", "description": "String", "groupId": "String",
		"timestamp": "EpochMilliseconds", "user": "String"},
}

// scalarTypes are the scalars the fake knows.
var scalarTypes = []string{"Int", "Float", "String", "Boolean", "ID", "EntityGuid", "Nrql", "Seconds", "EpochMilliseconds",
	"DateTime", "NrdbResult", "DashboardPermissions", "TaggingMutationErrorType"}

func fields(specs ...string) map[string]fieldDef {
	out := map[string]fieldDef{}
	for _, s := range specs {
		name, typ, _ := strings.Cut(s, ":")
		out[name] = fieldDef{Type: typ}
	}
	return out
}

func merge(a, b map[string]fieldDef) map[string]fieldDef {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func entityFields() map[string]fieldDef {
	return fields("guid:EntityGuid!", "name:String", "entityType:EntityType", "domain:String", "type:String", "accountId:Int",
		"reporting:Boolean", "alertSeverity:EntityAlertSeverity", "permalink:String", "tags:[EntityTag]")
}

// namedType strips list brackets and non-null marks: [String!]! -> String.
func namedType(t string) string { return strings.Trim(t, "[]!") }

// gqlError is one entry of a response's errors array.
type gqlError struct {
	Message    string         `json:"message"`
	Locations  []location     `json:"locations,omitempty"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

type location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// validator checks an operation against the schema the way a GraphQL server
// does before it executes anything.
type validator struct {
	op     *operation
	vars   map[string]string // declared variables: name to type
	used   map[string]bool
	errors []gqlError
}

func (v *validator) fail(s *selection, format string, args ...any) {
	e := gqlError{Message: fmt.Sprintf(format, args...)}
	if s != nil {
		e.Locations = []location{{s.Line, s.Col}}
	}
	v.errors = append(v.errors, e)
}

// validate returns the validation errors of op with the request's variables.
func validate(op *operation, variables map[string]any) []gqlError {
	v := &validator{op: op, vars: map[string]string{}, used: map[string]bool{}}
	for _, d := range op.Vars {
		if _, dup := v.vars[d.Name]; dup {
			v.fail(nil, "There can be only one variable named \"$%s\".", d.Name)
		}
		if !knownInputType(namedType(d.Type)) {
			v.fail(nil, "Unknown type \"%s\".", namedType(d.Type))
		}
		v.vars[d.Name] = d.Type
	}
	root := "Query"
	if op.Kind == "mutation" {
		root = "Mutation"
	}
	v.selections(root, op.Sel)
	for _, d := range op.Vars {
		if !v.used[d.Name] {
			v.fail(nil, "Variable \"$%s\" is never used.", d.Name)
		}
	}
	if len(v.errors) > 0 {
		return v.errors
	}
	for _, d := range op.Vars {
		val, present := variables[d.Name]
		if !present && strings.HasSuffix(d.Type, "!") {
			v.fail(nil, "Variable \"$%s\" of required type \"%s\" was not provided.", d.Name, d.Type)
			continue
		}
		if present {
			if msg := checkInput(d.Type, val, 0); msg != "" {
				v.fail(nil, "Variable \"$%s\" got invalid value %s; %s", d.Name, compactJSON(val), msg)
			}
		}
	}
	return v.errors
}

func knownInputType(t string) bool {
	_, in := inputTypes[t]
	_, en := enumTypes[t]
	return in || en || slices.Contains(scalarTypes, t)
}

func (v *validator) selections(parent string, sels []*selection) {
	for _, s := range sels {
		if s.On != "" {
			if _, ok := objectTypes[s.On]; !ok {
				v.fail(s, "Unknown type \"%s\".", s.On)
				continue
			}
			if s.On != parent && !slices.Contains(implements[s.On], parent) {
				v.fail(s, "Fragment cannot be spread here as objects of type \"%s\" can never be of type \"%s\".", parent, s.On)
				continue
			}
			v.selections(s.On, s.Sel)
			continue
		}
		if s.Name == "__typename" {
			continue
		}
		def, ok := objectTypes[parent][s.Name]
		if !ok {
			v.fail(s, "Cannot query field \"%s\" on type \"%s\".", s.Name, parent)
			continue
		}
		v.arguments(parent, s, def)
		_, isObject := objectTypes[namedType(def.Type)]
		switch {
		case isObject && len(s.Sel) == 0:
			v.fail(s, "Field \"%s\" of type \"%s\" must have a selection of subfields.", s.Name, def.Type)
		case !isObject && len(s.Sel) > 0:
			v.fail(s, "Field \"%s\" must not have a selection since type \"%s\" has no subfields.", s.Name, def.Type)
		case isObject:
			v.selections(namedType(def.Type), s.Sel)
		}
	}
}

func (v *validator) arguments(parent string, s *selection, def fieldDef) {
	given := map[string]bool{}
	for _, a := range s.Args {
		want, ok := def.Args[a.Name]
		if !ok {
			v.fail(s, "Unknown argument \"%s\" on field \"%s\" of type \"%s\".", a.Name, s.Name, parent)
			continue
		}
		given[a.Name] = true
		v.argumentValue(s, a.Value, want)
	}
	for name, typ := range def.Args {
		if strings.HasSuffix(typ, "!") && !given[name] {
			v.fail(s, "Field \"%s\" argument \"%s\" of type \"%s\" is required, but it was not provided.", s.Name, name, typ)
		}
	}
}

// argumentValue checks a written argument: variables by their declared
// type, literals by their value (with the variables they contain).
func (v *validator) argumentValue(s *selection, val value, want string) {
	if val.Kind == kindVariable {
		declared, ok := v.vars[val.Text]
		if !ok {
			v.fail(s, "Variable \"$%s\" is not defined.", val.Text)
			return
		}
		v.used[val.Text] = true
		if declared != want && declared != want+"!" {
			v.fail(s, "Variable \"$%s\" of type \"%s\" used in position expecting type \"%s\".", val.Text, declared, want)
		}
		return
	}
	if val.Kind == kindList {
		for _, e := range val.List {
			v.argumentValue(s, e, strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(want, "!"), "["), "]"))
		}
		return
	}
	if val.Kind == kindObject {
		fieldsOf := inputTypes[namedType(want)]
		for _, f := range val.Fields {
			ft, ok := fieldsOf[f.Name]
			if !ok {
				v.fail(s, "Argument has invalid value: unknown field \"%s\" of %s.", f.Name, namedType(want))
				continue
			}
			v.argumentValue(s, f.Value, ft)
		}
		return
	}
	if msg := checkInput(want, val.resolve(nil), 0); msg != "" {
		v.fail(s, "Argument has invalid value %s; %s", compactJSON(val.resolve(nil)), msg)
	}
}

// checkInput checks a value against an input type and returns what is wrong.
func checkInput(typ string, val any, depth int) string {
	if depth > maxDepth {
		return "value is nested too deeply."
	}
	if strings.HasSuffix(typ, "!") {
		if val == nil {
			return fmt.Sprintf("Expected non-nullable type \"%s\" not to be null.", typ)
		}
		typ = strings.TrimSuffix(typ, "!")
	}
	if val == nil {
		return ""
	}
	if strings.HasPrefix(typ, "[") {
		inner := typ[1 : len(typ)-1]
		list, ok := val.([]any)
		if !ok {
			return checkInput(inner, val, depth+1) // a single value is coerced to a list
		}
		for i, e := range list {
			if msg := checkInput(inner, e, depth+1); msg != "" {
				return fmt.Sprintf("In element #%d: %s", i, msg)
			}
		}
		return ""
	}
	if fieldsOf, ok := inputTypes[typ]; ok {
		obj, ok := val.(map[string]any)
		if !ok {
			return fmt.Sprintf("Expected type \"%s\" to be an object.", typ)
		}
		for k, e := range obj {
			ft, ok := fieldsOf[k]
			if !ok {
				return fmt.Sprintf("Field \"%s\" is not defined by type \"%s\".", k, typ)
			}
			if msg := checkInput(ft, e, depth+1); msg != "" {
				return fmt.Sprintf("At \"%s\": %s", k, msg)
			}
		}
		for k, ft := range fieldsOf {
			if _, present := obj[k]; !present && strings.HasSuffix(ft, "!") {
				return fmt.Sprintf("Field \"%s\" of required type \"%s\" was not provided.", k, ft)
			}
		}
		return ""
	}
	if values, ok := enumTypes[typ]; ok {
		s, ok := val.(string)
		if !ok || !slices.Contains(values, s) {
			return fmt.Sprintf("Value %s does not exist in \"%s\" enum.", compactJSON(val), typ)
		}
		return ""
	}
	switch typ {
	case "Int", "Seconds":
		f, ok := val.(float64)
		if !ok || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
			return fmt.Sprintf("Int cannot represent non-integer or out-of-range value: %s", compactJSON(val))
		}
	case "EpochMilliseconds":
		f, ok := val.(float64)
		if !ok || f != math.Trunc(f) {
			return fmt.Sprintf("EpochMilliseconds cannot represent value: %s", compactJSON(val))
		}
	case "Float":
		if _, ok := val.(float64); !ok {
			return fmt.Sprintf("Float cannot represent non numeric value: %s", compactJSON(val))
		}
	case "Boolean":
		if _, ok := val.(bool); !ok {
			return fmt.Sprintf("Boolean cannot represent a non boolean value: %s", compactJSON(val))
		}
	case "String", "ID", "EntityGuid", "Nrql":
		if _, ok := val.(string); !ok {
			return fmt.Sprintf("%s cannot represent a non string value: %s", typ, compactJSON(val))
		}
	default:
		return fmt.Sprintf("Unknown type \"%s\".", typ)
	}
	return ""
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// object is a value of an object type during execution. A field holds a
// plain value, another *object, a []*object, or a resolver.
type object struct {
	Type   string
	Fields map[string]any
}

// resolver computes a field from its arguments; a *fieldFailure result
// becomes an entry of the errors array and a null field.
type resolver func(args map[string]any) (any, *fieldFailure)

// fieldFailure is a resolver's error.
type fieldFailure struct {
	Message    string
	Extensions map[string]any
}

// orderedObject keeps the selection order in the JSON response.
type orderedObject struct {
	keys   []string
	values map[string]any
}

func (o *orderedObject) set(k string, v any) {
	if _, ok := o.values[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.values[k] = v
}

// MarshalJSON writes the members in selection order.
func (o *orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// executor runs a validated operation.
type executor struct {
	vars   map[string]any
	errors []gqlError
}

func (x *executor) selectObject(obj *object, sels []*selection, path []any) *orderedObject {
	out := &orderedObject{values: map[string]any{}}
	x.fill(out, obj, sels, path)
	return out
}

func (x *executor) fill(out *orderedObject, obj *object, sels []*selection, path []any) {
	for _, s := range sels {
		if s.On != "" {
			if obj.Type == s.On {
				x.fill(out, obj, s.Sel, path)
			}
			continue
		}
		if s.Name == "__typename" {
			out.set(s.responseKey(), obj.Type)
			continue
		}
		fieldPath := append(slices.Clone(path), s.responseKey())
		raw := obj.Fields[s.Name]
		if r, ok := raw.(resolver); ok {
			args := map[string]any{}
			for _, a := range s.Args {
				args[a.Name] = a.Value.resolve(x.vars)
			}
			val, failure := r(args)
			if failure != nil {
				x.errors = append(x.errors, gqlError{Message: failure.Message, Locations: []location{{s.Line, s.Col}}, Path: fieldPath, Extensions: failure.Extensions})
				out.set(s.responseKey(), nil)
				continue
			}
			raw = val
		}
		out.set(s.responseKey(), x.shape(raw, s, fieldPath))
	}
}

// shape applies the sub-selection to a field's value.
func (x *executor) shape(raw any, s *selection, path []any) any {
	switch v := raw.(type) {
	case *object:
		if v == nil {
			return nil
		}
		return x.selectObject(v, s.Sel, path)
	case []*object:
		out := make([]any, len(v))
		for i, o := range v {
			out[i] = x.selectObject(o, s.Sel, append(slices.Clone(path), i))
		}
		return out
	default:
		return raw
	}
}
