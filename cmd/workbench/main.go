// Command workbench runs the Workbench server and its plugin tooling.
//
// Usage:
//
//	workbench serve
//	workbench migrate
//	workbench user add --email E [--admin]
//	workbench user login-link --email E
//	workbench token create --email E [--name N]
//	workbench token revoke --email E TOKEN_ID
//	workbench keys rotate
//	workbench plugin new --lang go|assemblyscript|c|rust [--dir DIR] [--pdk PATH] NAME
//	workbench plugin build DIR
//	workbench plugin inspect [--json] FILE.wasm
//	workbench plugin call [flags] FILE.wasm TOOL [JSON]
//	workbench modules ls|inspect NAME|reload NAME|unload NAME|load FILE.wasm [--server URL] [--json]
//	workbench help [command]
//
// The server is configured by environment variables (see README.md).
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
