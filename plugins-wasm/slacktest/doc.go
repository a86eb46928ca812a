// Package slacktest holds a fake Slack Web API served on 127.0.0.1 and the
// tests that run the built AssemblyScript Slack plugin
// (plugins-wasm/slack/slack.wasm) and the AssemblyScript kit's conformance
// plugin against the real Workbench runtime.
package slacktest
