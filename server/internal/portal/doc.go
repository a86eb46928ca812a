// Package portal serves Workbench's web pages: sign-in (email and password,
// or a one-time link), sign-out, the integrations list with connect and
// disconnect buttons, the pages of a connect handshake (the API-key form,
// the step to the OAuth provider, the OAuth callback and its result), and the
// account page with API tokens and the password, and the curl-sessions page (the
// user's sessions, each with a revoke button, and the calls made with them).
//
// Pages are Go html/template files embedded in the binary, with one small
// stylesheet and no script. A signed-in browser holds a session cookie
// (HttpOnly, SameSite=Lax, Secure when SERVER_PUBLIC_URL is https) whose
// SHA-256 is the store's session id; every form carries the session's CSRF
// token, checked on every POST (the sign-in forms use a cookie-bound token
// instead). Every page is sent with a strict Content-Security-Policy and
// no-referrer.
//
// The portal reaches the connect handshakes, the stored connections and the
// loaded integrations only through the interfaces it declares; the one place
// where its errors become pages is Portal.page.
package portal
