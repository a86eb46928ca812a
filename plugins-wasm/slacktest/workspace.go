package slacktest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// BotUserID is the user the fake's token acts as.
const BotUserID = "UBOT0000001"

// workspace is the fake's Slack workspace.
type workspace struct {
	channels []*Channel
	users    []*User
	messages map[string][]*Message // by channel ID, oldest first
	uploads  map[string]*upload    // by file ID
	clock    int64                 // seconds part of the next ts
	nextFile int
}

// Channel is a conversation as conversations.* return it.
type Channel struct {
	ID, Name             string
	IsPrivate, IsIM      bool
	IsMPIM, IsArchived   bool
	IsMember             bool
	NumMembers           int
	Topic, Purpose, User string
	extra                string // sent as properties.canvas, which the plugin drops
}

// User is a member as users.* return it.
type User struct {
	ID, Name, RealName, DisplayName, Title, TZ string
	IsBot, Deleted                             bool
}

// Message is a message in a channel.
type Message struct {
	TS, User, Text, ThreadTS string
	Blocks                   []any
	Reactions                map[string][]string // emoji -> users
	Files                    []string
	Edited                   bool
}

type upload struct {
	id, filename string
	length       int
	content      []byte
	uploaded     bool
	completed    bool
	title        string
}

func newWorkspace() *workspace {
	w := &workspace{
		messages: map[string][]*Message{},
		uploads:  map[string]*upload{},
		clock:    1712000000,
	}
	w.channels = []*Channel{
		{ID: "C0000000001", Name: "general", IsMember: true, NumMembers: 4, Topic: "Company-wide", Purpose: "Announcements"},
		{ID: "C0000000002", Name: "random", IsMember: true, NumMembers: 3},
		{ID: "C0000000003", Name: "leadership", IsPrivate: true, IsMember: true, NumMembers: 2},
		{ID: "C0000000004", Name: "old-project", IsArchived: true, NumMembers: 1},
		{ID: "C0000000005", Name: "ops", NumMembers: 2},
		{ID: "D0000000001", IsIM: true, IsPrivate: true, User: "U0000000001", IsMember: true},
	}
	w.users = []*User{
		{ID: "U0000000001", Name: "ana", RealName: "Ana Lima", DisplayName: "ana", Title: "Engineer", TZ: "Europe/Lisbon"},
		{ID: "U0000000002", Name: "bo", RealName: "Bo Chen", DisplayName: "bo", TZ: "America/New_York"},
		{ID: "U0000000003", Name: "gone", RealName: "Former Member", Deleted: true},
		{ID: BotUserID, Name: "workbench", RealName: "Workbench", IsBot: true},
	}
	general := "C0000000001"
	parent := w.add(general, &Message{User: "U0000000001", Text: "Deploy 1.2 is out :tada:"})
	w.add(general, &Message{User: "U0000000002", Text: "Nice, thanks!", ThreadTS: parent.TS})
	w.add(general, &Message{User: "U0000000001", Text: "Release notes are in the wiki", ThreadTS: parent.TS})
	parent.Reactions = map[string][]string{"tada": {"U0000000002"}}
	w.add(general, &Message{User: "U0000000002", Text: "Lunch at noon?"})
	w.add(general, &Message{User: BotUserID, Text: "Build 77 passed"})
	w.add("C0000000002", &Message{User: "U0000000002", Text: "deploy friday? never"})
	return w
}

// add appends m to a channel with the next timestamp.
func (w *workspace) add(channel string, m *Message) *Message {
	w.clock++
	m.TS = fmt.Sprintf("%d.%06d", w.clock, 100+len(w.messages[channel]))
	if m.Reactions == nil {
		m.Reactions = map[string][]string{}
	}
	w.messages[channel] = append(w.messages[channel], m)
	return m
}

func (w *workspace) channel(id string) *Channel {
	for _, c := range w.channels {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (w *workspace) message(channel, ts string) *Message {
	for _, m := range w.messages[channel] {
		if m.TS == ts {
			return m
		}
	}
	return nil
}

// Channels returns the fake's channels.
func (f *Fake) Channels() []Channel {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Channel, len(f.data.channels))
	for i, c := range f.data.channels {
		out[i] = *c
	}
	return out
}

// Messages returns a copy of a channel's messages, oldest first.
func (f *Fake) Messages(channel string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Message
	for _, m := range f.data.messages[channel] {
		c := *m
		c.Reactions = map[string][]string{}
		for k, v := range m.Reactions {
			c.Reactions[k] = slices.Clone(v)
		}
		out = append(out, c)
	}
	return out
}

// Upload returns what was uploaded for a file ID and whether the upload was completed.
func (f *Fake) Upload(id string) (content []byte, title string, completed bool, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	up, ok := f.data.uploads[id]
	if !ok {
		return nil, "", false, false
	}
	return slices.Clone(up.content), up.title, up.completed, true
}

func channelJSON(c *Channel, withMembers bool) map[string]any {
	out := map[string]any{
		"id": c.ID, "created": 1700000000, "is_archived": c.IsArchived,
		"is_im": c.IsIM, "is_mpim": c.IsMPIM, "is_private": c.IsPrivate,
	}
	if c.IsIM {
		out["user"] = c.User
		return out
	}
	out["name"] = c.Name
	out["is_channel"] = !c.IsPrivate
	out["is_group"] = c.IsPrivate
	out["is_general"] = c.Name == "general"
	out["is_member"] = c.IsMember
	out["creator"] = "U0000000001"
	out["topic"] = map[string]any{"value": c.Topic, "creator": "U0000000001", "last_set": 0}
	out["purpose"] = map[string]any{"value": c.Purpose, "creator": "U0000000001", "last_set": 0}
	if withMembers {
		out["num_members"] = c.NumMembers
	}
	if c.extra != "" {
		out["properties"] = map[string]any{"canvas": map[string]any{"file_id": "F0", "quip_thread_id": c.extra}}
	}
	return out
}

func (w *workspace) messageJSON(channel string, m *Message) map[string]any {
	out := map[string]any{"type": "message", "ts": m.TS, "user": m.User, "text": m.Text, "team": "T0000000001"}
	if m.User == BotUserID {
		out["bot_id"] = "B0000000001"
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
		if m.ThreadTS != m.TS {
			out["parent_user_id"] = w.message(channel, m.ThreadTS).User
		}
	}
	var replies int
	for _, r := range w.messages[channel] {
		if r.ThreadTS == m.TS && r.TS != m.TS {
			replies++
		}
	}
	if replies > 0 {
		out["thread_ts"] = m.TS
		out["reply_count"] = replies
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	if m.Edited {
		out["edited"] = map[string]any{"user": m.User, "ts": m.TS}
	}
	var names []string
	for name := range m.Reactions {
		names = append(names, name)
	}
	slices.Sort(names)
	var reactions []any
	for _, name := range names {
		users := m.Reactions[name]
		reactions = append(reactions, map[string]any{"name": name, "users": users, "count": len(users)})
	}
	if len(reactions) > 0 {
		out["reactions"] = reactions
	}
	var files []any
	for _, id := range m.Files {
		up := w.uploads[id]
		files = append(files, map[string]any{"id": id, "name": up.filename, "title": up.title, "permalink": "https://acme.slack.com/files/" + id})
	}
	if len(files) > 0 {
		out["files"] = files
	}
	return out
}

func userJSON(u *User) map[string]any {
	return map[string]any{
		"id": u.ID, "team_id": "T0000000001", "name": u.Name, "deleted": u.Deleted, "real_name": u.RealName,
		"tz": u.TZ, "is_bot": u.IsBot, "is_admin": false, "is_owner": false,
		"profile": map[string]any{"real_name": u.RealName, "display_name": u.DisplayName, "title": u.Title, "image_72": "https://avatars.example/x.png"},
	}
}

func (f *Fake) authTest(*call) (map[string]any, *slackErr) {
	return map[string]any{
		"url": "https://acme.slack.com/", "team": "Acme", "user": "workbench",
		"team_id": "T0000000001", "user_id": BotUserID, "bot_id": "B0000000001", "is_enterprise_install": false,
	}, nil
}

var conversationTypes = []string{"public_channel", "private_channel", "mpim", "im"}

func (f *Fake) conversationsList(c *call) (map[string]any, *slackErr) {
	types := []string{"public_channel"}
	if s := c.str("types"); s != "" {
		types = strings.Split(s, ",")
	}
	for _, t := range types {
		if !slices.Contains(conversationTypes, t) {
			return nil, errOf("invalid_types")
		}
		needed := map[string]string{"private_channel": "groups:read", "im": "im:read", "mpim": "mpim:read"}[t]
		if needed != "" && !slices.Contains(f.scopes, needed) {
			return nil, &slackErr{code: "missing_scope", extra: map[string]any{"needed": needed, "provided": strings.Join(f.scopes, ",")}}
		}
	}
	var matched []*Channel
	for _, ch := range f.data.channels {
		kind := "public_channel"
		switch {
		case ch.IsIM:
			kind = "im"
		case ch.IsMPIM:
			kind = "mpim"
		case ch.IsPrivate:
			kind = "private_channel"
		}
		if !slices.Contains(types, kind) || (ch.IsArchived && c.boolArg("exclude_archived", false)) {
			continue
		}
		matched = append(matched, ch)
	}
	items, next, serr := page(c, matched, 100, 1000)
	if serr != nil {
		return nil, serr
	}
	list := []any{}
	for _, ch := range items {
		list = append(list, channelJSON(ch, true))
	}
	return map[string]any{"channels": list, "response_metadata": meta(next)}, nil
}

// readable returns the channel a history-like call may read.
func (f *Fake) readable(id string) (*Channel, *slackErr) {
	ch := f.data.channel(id)
	if ch == nil {
		return nil, errOf("channel_not_found")
	}
	if !ch.IsMember {
		return nil, errOf("not_in_channel")
	}
	return ch, nil
}

func parseTS(s string) (float64, bool) {
	if s == "" {
		return 0, true
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

func (f *Fake) conversationsHistory(c *call) (map[string]any, *slackErr) {
	ch, serr := f.readable(c.str("channel"))
	if serr != nil {
		return nil, serr
	}
	oldest, ok := parseTS(c.str("oldest"))
	if !ok {
		return nil, errOf("invalid_ts_oldest")
	}
	latest, ok := parseTS(c.str("latest"))
	if !ok {
		return nil, errOf("invalid_ts_latest")
	}
	inclusive := c.boolArg("inclusive", false)
	var top []*Message // newest first, thread replies left out as Slack does
	all := f.data.messages[ch.ID]
	for i := len(all) - 1; i >= 0; i-- {
		m := all[i]
		if m.ThreadTS != "" && m.ThreadTS != m.TS {
			continue
		}
		ts, _ := strconv.ParseFloat(m.TS, 64)
		if (c.str("oldest") != "" && (ts < oldest || (!inclusive && ts == oldest))) ||
			(c.str("latest") != "" && (ts > latest || (!inclusive && ts == latest))) {
			continue
		}
		top = append(top, m)
	}
	items, next, serr := page(c, top, 100, 999)
	if serr != nil {
		return nil, serr
	}
	list := []any{}
	for _, m := range items {
		list = append(list, f.data.messageJSON(ch.ID, m))
	}
	return map[string]any{"messages": list, "has_more": next != "", "response_metadata": meta(next)}, nil
}

func (f *Fake) conversationsReplies(c *call) (map[string]any, *slackErr) {
	ch, serr := f.readable(c.str("channel"))
	if serr != nil {
		return nil, serr
	}
	parent := f.data.message(ch.ID, c.str("ts"))
	if parent == nil {
		return nil, errOf("thread_not_found")
	}
	thread := []*Message{parent}
	for _, m := range f.data.messages[ch.ID] {
		if m.ThreadTS == parent.TS && m != parent {
			thread = append(thread, m)
		}
	}
	items, next, serr := page(c, thread, 1000, 1000)
	if serr != nil {
		return nil, serr
	}
	list := []any{}
	for _, m := range items {
		list = append(list, f.data.messageJSON(ch.ID, m))
	}
	return map[string]any{"messages": list, "has_more": next != "", "response_metadata": meta(next)}, nil
}

func (f *Fake) conversationsInfo(c *call) (map[string]any, *slackErr) {
	ch := f.data.channel(c.str("channel"))
	if ch == nil {
		return nil, errOf("channel_not_found")
	}
	return map[string]any{"channel": channelJSON(ch, c.boolArg("include_num_members", false))}, nil
}

func (f *Fake) getPermalink(c *call) (map[string]any, *slackErr) {
	ch := f.data.channel(c.str("channel"))
	if ch == nil {
		return nil, errOf("channel_not_found")
	}
	m := f.data.message(ch.ID, c.str("message_ts"))
	if m == nil {
		return nil, errOf("message_not_found")
	}
	return map[string]any{"channel": ch.ID, "permalink": "https://acme.slack.com/archives/" + ch.ID + "/p" + strings.ReplaceAll(m.TS, ".", "")}, nil
}

// writable returns the channel a chat.* call may write to.
func (f *Fake) writable(id string) (*Channel, *slackErr) {
	ch := f.data.channel(id)
	switch {
	case ch == nil:
		return nil, errOf("channel_not_found")
	case ch.IsArchived:
		return nil, errOf("is_archived")
	case !ch.IsMember:
		return nil, errOf("not_in_channel")
	}
	return ch, nil
}

func (f *Fake) postMessage(c *call) (map[string]any, *slackErr) {
	ch, serr := f.writable(c.str("channel"))
	if serr != nil {
		return nil, serr
	}
	blocks, _ := c.args["blocks"].([]any)
	if _, present := c.args["blocks"]; present && blocks == nil {
		return nil, errOf("invalid_blocks")
	}
	if c.str("text") == "" && len(blocks) == 0 {
		return nil, errOf("no_text")
	}
	m := &Message{User: BotUserID, Text: c.str("text"), Blocks: blocks}
	if ts := c.str("thread_ts"); ts != "" {
		if f.data.message(ch.ID, ts) == nil {
			return nil, errOf("thread_not_found")
		}
		m.ThreadTS = ts
	}
	f.data.add(ch.ID, m)
	return map[string]any{"channel": ch.ID, "ts": m.TS, "message": f.data.messageJSON(ch.ID, m)}, nil
}

func (f *Fake) updateMessage(c *call) (map[string]any, *slackErr) {
	ch, serr := f.writable(c.str("channel"))
	if serr != nil {
		return nil, serr
	}
	m := f.data.message(ch.ID, c.str("ts"))
	switch {
	case m == nil:
		return nil, errOf("message_not_found")
	case m.User != BotUserID:
		return nil, errOf("cant_update_message")
	}
	blocks, _ := c.args["blocks"].([]any)
	if c.str("text") == "" && len(blocks) == 0 {
		return nil, errOf("no_text")
	}
	m.Text, m.Blocks, m.Edited = c.str("text"), blocks, true
	return map[string]any{"channel": ch.ID, "ts": m.TS, "text": m.Text}, nil
}

func (f *Fake) deleteMessage(c *call) (map[string]any, *slackErr) {
	ch := f.data.channel(c.str("channel"))
	if ch == nil {
		return nil, errOf("channel_not_found")
	}
	msgs := f.data.messages[ch.ID]
	i := slices.IndexFunc(msgs, func(m *Message) bool { return m.TS == c.str("ts") })
	switch {
	case i < 0:
		return nil, errOf("message_not_found")
	case msgs[i].User != BotUserID:
		return nil, errOf("cant_delete_message")
	}
	f.data.messages[ch.ID] = slices.Delete(msgs, i, i+1)
	return map[string]any{"channel": ch.ID, "ts": c.str("ts")}, nil
}

var emojiName = regexp.MustCompile(`^[a-z0-9_+'-]+$`)

// reactionTarget finds the message a reactions.* call names.
func (f *Fake) reactionTarget(c *call) (*Message, *slackErr) {
	if c.str("channel") == "" || c.str("timestamp") == "" {
		return nil, errOf("no_item_specified")
	}
	ch := f.data.channel(c.str("channel"))
	if ch == nil {
		return nil, errOf("channel_not_found")
	}
	m := f.data.message(ch.ID, c.str("timestamp"))
	if m == nil {
		return nil, errOf("message_not_found")
	}
	if !emojiName.MatchString(c.str("name")) {
		return nil, errOf("invalid_name")
	}
	return m, nil
}

func (f *Fake) reactionsAdd(c *call) (map[string]any, *slackErr) {
	m, serr := f.reactionTarget(c)
	if serr != nil {
		return nil, serr
	}
	name := c.str("name")
	if slices.Contains(m.Reactions[name], BotUserID) {
		return nil, errOf("already_reacted")
	}
	m.Reactions[name] = append(m.Reactions[name], BotUserID)
	return map[string]any{}, nil
}

func (f *Fake) reactionsRemove(c *call) (map[string]any, *slackErr) {
	m, serr := f.reactionTarget(c)
	if serr != nil {
		return nil, serr
	}
	name := c.str("name")
	i := slices.Index(m.Reactions[name], BotUserID)
	if i < 0 {
		return nil, errOf("no_reaction")
	}
	m.Reactions[name] = slices.Delete(m.Reactions[name], i, i+1)
	if len(m.Reactions[name]) == 0 {
		delete(m.Reactions, name)
	}
	return map[string]any{}, nil
}

func (f *Fake) usersList(c *call) (map[string]any, *slackErr) {
	items, next, serr := page(c, f.data.users, 100, 1000)
	if serr != nil {
		return nil, serr
	}
	list := []any{}
	for _, u := range items {
		list = append(list, userJSON(u))
	}
	return map[string]any{"members": list, "cache_ts": 1712000000, "response_metadata": meta(next)}, nil
}

func (f *Fake) usersInfo(c *call) (map[string]any, *slackErr) {
	for _, u := range f.data.users {
		if u.ID == c.str("user") {
			return map[string]any{"user": userJSON(u)}, nil
		}
	}
	return nil, errOf("user_not_found")
}

func (f *Fake) searchMessages(c *call) (map[string]any, *slackErr) {
	count, serr := c.limit("count", 20, 100)
	if serr != nil {
		return nil, serr
	}
	pageNo := 1
	if s := c.str("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return nil, invalidArgs("page must be between 1 and 100")
		}
		pageNo = n
	}
	sortBy, dir := c.str("sort"), c.str("sort_dir")
	if (sortBy != "" && sortBy != "score" && sortBy != "timestamp") || (dir != "" && dir != "asc" && dir != "desc") {
		return nil, invalidArgs("sort must be score or timestamp and sort_dir asc or desc")
	}
	q := strings.ToLower(c.str("query"))
	var matches []map[string]any
	for _, ch := range f.data.channels {
		for _, m := range f.data.messages[ch.ID] {
			if !strings.Contains(strings.ToLower(m.Text), q) {
				continue
			}
			matches = append(matches, map[string]any{
				"type": "message", "ts": m.TS, "text": m.Text, "user": m.User,
				"username": f.userName(m.User), "channel": map[string]any{"id": ch.ID, "name": ch.Name},
				"permalink": "https://acme.slack.com/archives/" + ch.ID + "/p" + strings.ReplaceAll(m.TS, ".", ""),
			})
		}
	}
	if sortBy == "timestamp" && dir != "asc" {
		slices.Reverse(matches)
	}
	total := len(matches)
	pages := max(1, (total+count-1)/count)
	start := min((pageNo-1)*count, total)
	end := min(start+count, total)
	return map[string]any{
		"query": c.str("query"),
		"messages": map[string]any{
			"total": total, "matches": matches[start:end],
			"paging": map[string]any{"count": count, "total": total, "page": pageNo, "pages": pages},
		},
	}, nil
}

func (f *Fake) userName(id string) string {
	for _, u := range f.data.users {
		if u.ID == id {
			return u.Name
		}
	}
	return ""
}

func (f *Fake) getUploadURL(c *call) (map[string]any, *slackErr) {
	n, err := strconv.Atoi(c.str("length"))
	if err != nil || n < 1 {
		return nil, invalidArgs("length must be a positive integer")
	}
	f.data.nextFile++
	id := fmt.Sprintf("F%010d", f.data.nextFile)
	f.data.uploads[id] = &upload{id: id, filename: c.str("filename"), length: n}
	root := f.uploadBase
	if root == "" {
		root = "http://" + c.host
	}
	return map[string]any{"upload_url": root + "/upload/v1/" + id, "file_id": id}, nil
}

func (f *Fake) completeUpload(c *call) (map[string]any, *slackErr) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(c.str("files")), &files); err != nil || len(files) == 0 {
		return nil, invalidArgs("files must be a JSON array of {id, title}")
	}
	var ch *Channel
	if id := c.str("channel_id"); id != "" {
		var serr *slackErr
		if ch, serr = f.writable(id); serr != nil {
			return nil, serr
		}
	}
	var out []any
	var ids []string
	for _, fl := range files {
		up := f.data.uploads[fl.ID]
		if up == nil || !up.uploaded {
			return nil, errOf("file_not_found")
		}
		up.completed = true
		up.title = fl.Title
		if up.title == "" {
			up.title = up.filename
		}
		ids = append(ids, up.id)
		out = append(out, map[string]any{"id": up.id, "name": up.filename, "title": up.title, "size": len(up.content),
			"permalink": "https://acme.slack.com/files/" + up.id})
	}
	if ch != nil {
		m := &Message{User: BotUserID, Text: c.str("initial_comment"), Files: ids}
		if ts := c.str("thread_ts"); ts != "" {
			if f.data.message(ch.ID, ts) == nil {
				return nil, errOf("thread_not_found")
			}
			m.ThreadTS = ts
		}
		f.data.add(ch.ID, m)
	}
	return map[string]any{"files": out}, nil
}

// AddChannels adds n public channels named bulk-<i>, each carrying
// extraBytes of properties (as Slack's canvas and tab settings do) that the
// plugin does not return, for tests of large answers.
func (f *Fake) AddChannels(n, extraBytes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	extra := strings.Repeat("x", extraBytes)
	for i := range n {
		f.data.channels = append(f.data.channels, &Channel{
			ID: fmt.Sprintf("CB%09d", i), Name: fmt.Sprintf("bulk-%d", i), IsMember: true, NumMembers: i % 50, extra: extra,
		})
	}
}
