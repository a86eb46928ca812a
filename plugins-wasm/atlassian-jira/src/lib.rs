//! atlassian-jira is the Workbench plugin for Jira Cloud, over the REST API
//! v3 (https://developer.atlassian.com/cloud/jira/platform/rest/v3/).
//!
//! A connection holds the user's site (the <site> of
//! https://<site>.atlassian.net), email and API token. The host sends the
//! email and token as HTTP basic auth and lets the plugin reach exactly
//! that user's site; the plugin never sees the token. Operators (and tests)
//! may point the plugin at another base URL with ATLASSIAN_JIRA_BASE_URL.

mod adf;
mod client;
mod issues;
mod projects;

#[cfg(test)]
mod tests;

use workbench::schema::{array, boolean, enumeration, integer, object, open_object, string};
use workbench::{ApiKeyField, Auth, Placement, Plugin, Tool, Value};

fn issue_key() -> Value {
    string("The issue key (PROJ-123) or id (10001).")
}

fn max_results(description: &str) -> Value {
    integer(description).with("minimum", 1).with("maximum", 100).with("default", 50)
}

fn start_at() -> Value {
    integer("The index of the first item to return (0 is the first).").with("minimum", 0).with("default", 0)
}

fn fields() -> Value {
    array(
        string("A field id such as summary, status or customfield_10010."),
        "The fields to return; the defaults cover summary, status, type, priority, people, project, labels and dates. Use *all for every field.",
    )
}

fn labels(description: &str) -> Value {
    array(string("A label (no spaces)."), description)
}

fn description_inputs() -> Vec<(&'static str, Value)> {
    vec![
        ("description", string("The description as plain text: blank lines separate paragraphs. An empty string clears it on update.")),
        ("description_adf", open_object("The description as an Atlassian Document Format document, for rich content; instead of description.")),
    ]
}

fn plugin() -> Plugin {
    let mut create_props = vec![
        ("project_key", string("The project key (PROJ) or id.")),
        ("summary", string("The issue's summary (its title).").with("minLength", 1).with("maxLength", 255)),
        ("issue_type", string("The issue type's name, such as Task, Bug, Story or Epic.").with("default", "Task")),
    ];
    create_props.extend(description_inputs());
    create_props.extend(vec![
        ("labels", labels("Labels to set.")),
        ("priority", string("The priority's name, such as High.")),
        ("assignee_account_id", string("The account id of the assignee (see atlassian_jira_search_users).")),
        ("parent_key", string("The parent issue's key, for a sub-task or an issue under an epic.")),
    ]);
    let mut update_props = vec![("issue_key", issue_key()), ("summary", string("A new summary.").with("minLength", 1).with("maxLength", 255))];
    update_props.extend(description_inputs());
    update_props.extend(vec![
        ("priority", string("A new priority's name.")),
        ("labels", labels("Labels replacing all current ones.")),
        ("add_labels", labels("Labels to add.")),
        ("remove_labels", labels("Labels to remove.")),
        ("notify_users", boolean("Whether watchers get an email about the change.").with("default", true)),
    ]);

    Plugin::new("atlassian-jira", "0.1.0", "Issues, projects, comments and users in Jira Cloud, over the REST API v3.")
        .title("Jira")
        .categories(&["project-management", "developer-tools"])
        .hosts(&["{site}.atlassian.net"])
        .auth(Auth::ApiKey {
            fields: vec![
                ApiKeyField::new("site", "Site (the <site> in https://<site>.atlassian.net)").required().pattern("^[a-z0-9][a-z0-9-]{0,61}$").placeholder("acme"),
                ApiKeyField::new("email", "Atlassian account email").required().placeholder("you@example.com"),
                ApiKeyField::new("api_token", "API token (id.atlassian.com/manage-profile/security/api-tokens)").secret().required(),
            ],
            placement: Placement::Basic { username: "{email}".into(), password: "{api_token}".into() },
        })
        .tool(
            Tool::new(
                "atlassian_jira_search_issues",
                "Searches issues with JQL (for example: project = PROJ AND status != Done ORDER BY updated DESC). Returns one page; pass next_page_token from the result to get the next one.",
                issues::search_issues,
            )
            .title("Search issues with JQL")
            .input(object(
                vec![
                    ("jql", string("A bounded JQL query: it must restrict the search, for example by project.").with("minLength", 1)),
                    ("fields", fields()),
                    ("max_results", max_results("Issues per page.")),
                    ("next_page_token", string("The next_page_token of the previous page.")),
                ],
                &["jql"],
            ))
            .read_only()
            .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_count_issues", "Counts the issues a JQL query matches (an approximate count).", issues::count_issues)
                .title("Count issues")
                .input(object(vec![("jql", string("A bounded JQL query.").with("minLength", 1))], &["jql"]))
                .read_only()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_get_issue", "Returns one issue with its description as text.", issues::get_issue)
                .title("Get an issue")
                .input(object(vec![("issue_key", issue_key()), ("fields", fields())], &["issue_key"]))
                .read_only()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_create_issue", "Creates an issue in a project and returns its key and URL.", issues::create_issue)
                .title("Create an issue")
                .input(object(create_props, &["project_key", "summary"]))
                .open_world(),
        )
        .tool(
            Tool::new(
                "atlassian_jira_update_issue",
                "Changes an issue's summary, description, priority or labels. Fields not given are left as they are.",
                issues::update_issue,
            )
            .title("Update an issue")
            .input(object(update_props, &["issue_key"]))
            .idempotent()
            .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_delete_issue", "Deletes an issue, and with delete_subtasks its sub-tasks. This cannot be undone.", issues::delete_issue)
                .title("Delete an issue")
                .input(object(
                    vec![("issue_key", issue_key()), ("delete_subtasks", boolean("Also delete the issue's sub-tasks; without it an issue with sub-tasks is not deleted.").with("default", false))],
                    &["issue_key"],
                ))
                .destructive()
                .idempotent()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_get_transitions", "Lists the workflow transitions available on an issue now, with their target statuses.", issues::get_transitions)
                .title("List an issue's transitions")
                .input(object(vec![("issue_key", issue_key())], &["issue_key"]))
                .read_only()
                .open_world(),
        )
        .tool(
            Tool::new(
                "atlassian_jira_transition_issue",
                "Moves an issue through its workflow (for example to In Progress or Done), by transition id or by transition or status name, optionally with a comment.",
                issues::transition_issue,
            )
            .title("Transition an issue")
            .input(object(
                vec![
                    ("issue_key", issue_key()),
                    ("transition_id", string("The transition's id, from atlassian_jira_get_transitions.")),
                    ("transition", string("The transition's name or its target status's name, instead of transition_id.")),
                    ("comment", string("A comment to add with the transition, as plain text.")),
                ],
                &["issue_key"],
            ))
            .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_add_comment", "Adds a comment to an issue.", issues::add_comment)
                .title("Comment on an issue")
                .input(object(vec![("issue_key", issue_key()), ("body", string("The comment as plain text: blank lines separate paragraphs.").with("minLength", 1))], &["issue_key", "body"]))
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_list_comments", "Lists an issue's comments, oldest first by default, with their bodies as text.", issues::list_comments)
                .title("List an issue's comments")
                .input(object(
                    vec![
                        ("issue_key", issue_key()),
                        ("start_at", start_at()),
                        ("max_results", max_results("Comments per page.")),
                        ("order_by", enumeration(&["created", "-created"], "created for oldest first, -created for newest first.").with("default", "created")),
                    ],
                    &["issue_key"],
                ))
                .read_only()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_assign_issue", "Assigns an issue to a user by account id, or unassigns it with account_id null.", issues::assign_issue)
                .title("Assign an issue")
                .input(object(
                    vec![
                        ("issue_key", issue_key()),
                        ("account_id", Value::object().with("type", Value::from(&["string", "null"][..])).with("description", "The assignee's account id (see atlassian_jira_search_users), or null to unassign.")),
                    ],
                    &["issue_key", "account_id"],
                ))
                .idempotent()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_list_projects", "Lists the projects the user can see, by key, optionally filtered by a name or key fragment.", projects::list_projects)
                .title("List projects")
                .input(object(
                    vec![("query", string("Only projects whose key or name contains this text.")), ("start_at", start_at()), ("max_results", max_results("Projects per page."))],
                    &[],
                ))
                .read_only()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_get_project", "Returns one project with its lead and issue types (the types create_issue accepts).", projects::get_project)
                .title("Get a project")
                .input(object(vec![("project_key", string("The project key (PROJ) or id."))], &["project_key"]))
                .read_only()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_search_users", "Finds users whose name or email starts with the query; returns their account ids.", projects::search_users)
                .title("Search users")
                .input(object(
                    vec![("query", string("The start of a display name or email address.").with("minLength", 1)), ("start_at", start_at()), ("max_results", max_results("Users per page."))],
                    &["query"],
                ))
                .read_only()
                .open_world(),
        )
        .tool(
            Tool::new("atlassian_jira_get_myself", "Returns the user this connection authenticates as.", projects::get_myself)
                .title("Get the current user")
                .read_only()
                .open_world(),
        )
}

workbench::plugin!(plugin);

workbench::export_tools!(plugin;
    atlassian_jira_search_issues,
    atlassian_jira_count_issues,
    atlassian_jira_get_issue,
    atlassian_jira_create_issue,
    atlassian_jira_update_issue,
    atlassian_jira_delete_issue,
    atlassian_jira_get_transitions,
    atlassian_jira_transition_issue,
    atlassian_jira_add_comment,
    atlassian_jira_list_comments,
    atlassian_jira_assign_issue,
    atlassian_jira_list_projects,
    atlassian_jira_get_project,
    atlassian_jira_search_users,
    atlassian_jira_get_myself,
);
