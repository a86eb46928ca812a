package portal

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// MinPasswordLen is the shortest password the account page accepts.
const MinPasswordLen = 10

// timeFormat is how pages show times.
const timeFormat = "2006-01-02 15:04 MST"

// modeLabels name the auth modes for people.
var modeLabels = map[string]string{
	manifest.ModeOAuth2: "OAuth",
	manifest.ModeAPIKey: "API key",
	manifest.ModeCookie: "Browser sign-in",
	manifest.ModeNone:   "No sign-in needed",
}

type integrationItem struct {
	Name, Title, Description, ModeLabel, Reason string
	Logo                                        template.URL
	Connected, Stored, Connectable              bool
}

// integrations lists the loaded integrations with the user's state.
func (p *Portal) integrations(c *fiber.Ctx, r *request) error {
	rows, err := p.store.Connections(r.ctx, r.user.ID)
	if err != nil {
		return err
	}
	stored := map[string]bool{}
	for _, row := range rows {
		stored[row.Integration] = true
	}
	var items []integrationItem
	for _, m := range p.catalog.Manifests() {
		it := integrationItem{Name: m.Name, Title: m.DisplayTitle(), Description: m.Description, ModeLabel: modeLabels[m.Auth.Mode],
			Logo: logoURL(m.Logo), Connectable: m.Auth.Mode != manifest.ModeNone}
		it.Stored = it.Connectable && stored[m.Name]
		st, err := p.connections.Status(r.ctx, r.user.ID, m.Name, m.Auth.Mode)
		switch {
		case err != nil:
			p.logger.Warn("reading a connection's status", "integration", m.Name, "err", err)
			it.Reason = "its state could not be read"
		case !st.Connected && it.Stored:
			it.Reason = st.Reason
		default:
			it.Connected = st.Connected
		}
		items = append(items, it)
	}
	data := struct {
		base
		Items []integrationItem
	}{base: p.base(r, "Integrations", "integrations"), Items: items}
	data.Notice = notice(c)
	return p.render(c, http.StatusOK, "integrations", data)
}

// logoURL returns a logo the page may show: an https URL or a raster or SVG
// data: image (shown in <img>, where SVG scripts do not run).
func logoURL(logo string) template.URL {
	switch {
	case strings.HasPrefix(logo, "https://"):
		return template.URL(logo)
	case strings.HasPrefix(logo, "data:image/png;"), strings.HasPrefix(logo, "data:image/jpeg;"), strings.HasPrefix(logo, "data:image/gif;"),
		strings.HasPrefix(logo, "data:image/webp;"), strings.HasPrefix(logo, "data:image/svg+xml;"):
		return template.URL(logo)
	}
	return ""
}

// startConnect starts a handshake and goes to its page.
func (p *Portal) startConnect(c *fiber.Ctx, r *request) error {
	link, _, err := p.connector.Connect(r.ctx, r.user.ID, c.Params("name"))
	if err != nil {
		return connectError(err)
	}
	u, err := url.Parse(link)
	if err != nil {
		return err
	}
	return redirect(c, u.RequestURI())
}

// disconnect removes the user's connection to an integration.
func (p *Portal) disconnect(c *fiber.Ctx, r *request) error {
	err := p.connections.Disconnect(r.ctx, r.user.ID, c.Params("name"))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return redirect(c, "/integrations?notice=disconnected")
}

// connectError maps the connect service's errors to pages.
func connectError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "connect: ")
	switch {
	case errors.Is(err, failure.ErrUnknownConnection):
		return failPage(http.StatusNotFound, "No such connection request", "There is no such connection request for your account. Start again from your integrations.")
	case errors.Is(err, failure.ErrUnknownIntegration):
		return failPage(http.StatusNotFound, "Unknown integration", msg)
	case errors.Is(err, failure.ErrNotConfigured):
		return failPage(http.StatusConflict, "Not available", msg)
	case errors.Is(err, store.ErrExpired):
		return failPage(http.StatusGone, "Request expired", msg)
	case errors.Is(err, store.ErrNotPending):
		return failPage(http.StatusConflict, "Already finished", msg)
	case errors.Is(err, connect.ErrWrongMode), errors.Is(err, connect.ErrUnknownState):
		return failPage(http.StatusBadRequest, "Cannot continue", msg)
	case errors.Is(err, connect.ErrWrongUser):
		return failPage(http.StatusForbidden, "Wrong account", msg)
	case errors.Is(err, connect.ErrAuthorization):
		return failPage(http.StatusBadGateway, "Could not connect", msg)
	}
	return err
}

type resultPage struct {
	base
	Heading, Message, Reason string
	OK                       bool
}

// result renders where a handshake ended.
func (p *Portal) result(c *fiber.Ctx, r *request, pc store.PendingConnection, title string) error {
	data := resultPage{base: p.base(r, "Connect "+title, "integrations")}
	switch pc.Status {
	case store.PendingConnected:
		data.Heading, data.OK = "Connected", true
		data.Message = fmt.Sprintf("You are connected to %s.", title)
	case store.PendingExpired:
		data.Heading, data.Reason = "Request expired", pc.Reason
		data.Message = fmt.Sprintf("This request to connect %s ran out of time.", title)
	default:
		data.Heading, data.Reason = "Not connected", pc.Reason
		data.Message = fmt.Sprintf("Connecting %s did not succeed.", title)
	}
	return p.render(c, http.StatusOK, "result", data)
}

// handshake shows a handshake's page: the API-key form, the step to the
// OAuth provider, or where it ended.
func (p *Portal) handshake(c *fiber.Ctx, r *request) error {
	h, err := p.connector.Handshake(r.ctx, r.user.ID, c.Params("id"))
	if err != nil {
		return connectError(err)
	}
	title := h.Pending.Integration
	if h.Manifest != nil {
		title = h.Manifest.DisplayTitle()
	}
	if h.Pending.Status != store.PendingWaiting {
		return p.result(c, r, h.Pending, title)
	}
	if h.Manifest == nil {
		return failPage(http.StatusGone, "Integration unavailable", fmt.Sprintf("%s is no longer available on this server.", title))
	}
	switch h.Pending.Mode {
	case manifest.ModeAPIKey:
		return p.apiKeyForm(c, r, h, nil, nil, http.StatusOK)
	case manifest.ModeOAuth2:
		link, err := p.connector.AuthorizeURL(r.ctx, r.user.ID, h.Pending.ID, c.Query("state"))
		if err != nil {
			return connectError(err)
		}
		u, err := url.Parse(link)
		if err != nil {
			return err
		}
		data := struct {
			base
			IntegrationTitle, Host, Scopes string
			AuthorizeURL                   template.URL
		}{base: p.base(r, "Connect "+title, "integrations"), IntegrationTitle: title, Host: u.Host,
			Scopes: strings.Join(h.Manifest.Auth.OAuth2.Scopes, " "), AuthorizeURL: template.URL(u.String())}
		return p.render(c, http.StatusOK, "oauth", data)
	}
	return failPage(http.StatusConflict, "Nothing to do here", fmt.Sprintf("%s has nothing to fill in on this page.", title))
}

type formField struct {
	Name, Label, Placeholder, Value, Error string
	Secret, Required, Focus                bool
}

// apiKeyForm renders the API-key form of handshake h. values refill the
// non-secret fields after a failed submit; problems are shown beside their
// fields.
func (p *Portal) apiKeyForm(c *fiber.Ctx, r *request, h connect.Handshake, values map[string]string, problems connect.FieldErrors, status int) error {
	byField := map[string]string{}
	for _, fe := range problems {
		byField[fe.Field] = fe.Message
	}
	var fields []formField
	focused := false
	for _, f := range h.Manifest.Auth.APIKey.Fields {
		ff := formField{Name: f.Name, Label: f.Label, Placeholder: f.Placeholder, Secret: f.Secret, Required: f.Required, Error: byField[f.Name]}
		if ff.Label == "" {
			ff.Label = f.Name
		}
		if !f.Secret {
			ff.Value = values[f.Name]
		}
		if !focused && (len(problems) == 0 || ff.Error != "") {
			ff.Focus, focused = true, true
		}
		fields = append(fields, ff)
	}
	title := h.Manifest.DisplayTitle()
	data := struct {
		base
		ID, IntegrationTitle, Expires string
		Fields                        []formField
		Errors                        connect.FieldErrors
	}{base: p.base(r, "Connect "+title, "integrations"), ID: h.Pending.ID, IntegrationTitle: title,
		Expires: h.Pending.ExpiresAt.Format(timeFormat), Fields: fields, Errors: problems}
	return p.render(c, status, "apikey", data)
}

// submitAPIKey completes an API-key handshake with the form.
func (p *Portal) submitAPIKey(c *fiber.Ctx, r *request) error {
	id := c.Params("id")
	h, err := p.connector.Handshake(r.ctx, r.user.ID, id)
	if err != nil {
		return connectError(err)
	}
	if h.Manifest == nil || h.Manifest.Auth.APIKey == nil {
		return connectError(fmt.Errorf("%w: this request does not take an API key", connect.ErrWrongMode))
	}
	values := map[string]string{}
	for _, f := range h.Manifest.Auth.APIKey.Fields {
		values[f.Name] = formValue(c, "f_"+f.Name)
	}
	_, err = p.connector.SubmitAPIKey(r.ctx, r.user.ID, id, values)
	var problems connect.FieldErrors
	if errors.As(err, &problems) {
		return p.apiKeyForm(c, r, h, values, problems, http.StatusUnprocessableEntity)
	}
	if err != nil {
		return connectError(err)
	}
	return redirect(c, connect.ConnectPath+h.Pending.ID)
}

// oauthCallback completes an OAuth handshake when the provider sends the
// browser back.
func (p *Portal) oauthCallback(c *fiber.Ctx, r *request) error {
	cb := connect.Callback{State: c.Query("state"), Code: c.Query("code"), Error: c.Query("error"), ErrorDescription: c.Query("error_description")}
	pc, err := p.connector.CompleteOAuth(r.ctx, r.user.ID, c.Params("integration"), cb)
	if err != nil {
		return connectError(err)
	}
	return p.result(c, r, pc, pc.Integration)
}

type tokenRow struct {
	ID, Name, Prefix, Created, LastUsed string
	Revoked                             bool
}

type accountPage struct {
	base
	Tokens                              []tokenRow
	NewToken, TokenError, PasswordError string
	HasPassword                         bool
	MinPassword                         int
}

// accountData reads what the account page shows.
func (p *Portal) accountData(r *request) (accountPage, error) {
	data := accountPage{base: p.base(r, "Account", "account"), MinPassword: MinPasswordLen}
	toks, err := p.store.Tokens(r.ctx, r.user.ID)
	if err != nil {
		return data, err
	}
	for _, t := range toks {
		row := tokenRow{ID: t.ID, Name: t.Name, Prefix: t.Prefix, Created: t.CreatedAt.Format(timeFormat), LastUsed: "never", Revoked: !t.RevokedAt.IsZero()}
		if !t.LastUsedAt.IsZero() {
			row.LastUsed = t.LastUsedAt.Format(timeFormat)
		}
		data.Tokens = append(data.Tokens, row)
	}
	hash, err := p.store.PasswordHash(r.ctx, r.user.ID)
	if err != nil {
		return data, err
	}
	data.HasPassword = hash != ""
	return data, nil
}

// account shows the account page.
func (p *Portal) account(c *fiber.Ctx, r *request) error {
	data, err := p.accountData(r)
	if err != nil {
		return err
	}
	data.Notice = notice(c)
	return p.render(c, http.StatusOK, "account", data)
}

// createToken mints an API token and shows it once.
func (p *Portal) createToken(c *fiber.Ctx, r *request) error {
	name := strings.TrimSpace(formValue(c, "name"))
	if name == "" {
		name = "portal " + p.now().UTC().Format("2006-01-02 15:04")
	}
	_, token, err := accounts.CreateToken(r.ctx, p.store, r.user.ID, name)
	data, derr := p.accountData(r)
	if derr != nil {
		return errors.Join(err, derr)
	}
	if errors.Is(err, store.ErrInvalid) {
		data.TokenError = fmt.Sprintf("The name must be at most %d characters of text.", store.MaxNameLen)
		return p.render(c, http.StatusUnprocessableEntity, "account", data)
	}
	if err != nil {
		return err
	}
	data.NewToken = token
	return p.render(c, http.StatusCreated, "account", data)
}

// revokeToken revokes one of the user's tokens.
func (p *Portal) revokeToken(c *fiber.Ctx, r *request) error {
	err := p.store.RevokeToken(r.ctx, r.user.ID, c.Params("id"))
	if errors.Is(err, store.ErrNotFound) {
		return failPage(http.StatusNotFound, "No such token", "You have no token with that id.")
	}
	if err != nil {
		return err
	}
	return redirect(c, "/account?notice=token-revoked")
}

// setPassword sets or changes the user's password.
func (p *Portal) setPassword(c *fiber.Ctx, r *request) error {
	data, err := p.accountData(r)
	if err != nil {
		return err
	}
	current, next, confirm := formValue(c, "current"), formValue(c, "new"), formValue(c, "confirm")
	problem := ""
	switch {
	case len(next) < MinPasswordLen:
		problem = fmt.Sprintf("The new password must have at least %d characters.", MinPasswordLen)
	case len(next) > secrets.MaxPasswordLen:
		problem = fmt.Sprintf("The new password must have at most %d characters.", secrets.MaxPasswordLen)
	case next != confirm:
		problem = "The two new passwords differ."
	case data.HasPassword:
		if err := p.signIn.Recheck(r.ctx, *r.user, current); errors.Is(err, failure.ErrUnauthenticated) {
			problem = "The current password is wrong."
		} else if err != nil {
			return signInRefusal(err)
		}
	}
	if problem != "" {
		data.PasswordError = problem
		return p.render(c, http.StatusUnprocessableEntity, "account", data)
	}
	if err := accounts.SetPassword(r.ctx, p.store, p.passwords, r.user.ID, next); err != nil {
		return signInRefusal(err)
	}
	return redirect(c, "/account?notice=password-set")
}
