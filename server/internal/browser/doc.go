// Package browser owns the browser sessions: one headless Chromium per user
// with a persistent profile under <Dir>/<user>, killed after an idle TTL
// (the profile is kept), under a global cap; the built-in `browser`
// integration whose tools drive that session (Manager.Call); and the /api
// route that resets a user's browser and profile (Manager.Mount).
//
// Every connection a browser opens goes through an in-process HTTP proxy
// owned by its session, whose dials go through the egress address rule
// (runtime/egress): checked after resolution and pinned, so neither a
// navigation, a redirect, a subresource, a fetch nor a WebSocket reaches a
// refused address (docs/browser.md). Spawning and closing browsers never
// hold the manager's lock. The package imports no sibling service; the
// server wires it into the catalog and the /api router.
package browser
