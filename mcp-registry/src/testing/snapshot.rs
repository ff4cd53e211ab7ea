//! Listing snapshots: what clients are shown, kept in a file and compared on every test run.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::registry::Registry;

/// Set to `1` to (re)write the snapshot files instead of comparing against them.
pub const SNAPSHOT_UPDATE_ENV: &str = "MCP_SNAPSHOT_UPDATE";

/// The listing methods a snapshot records, and the member each result lists under.
const LISTINGS: [(&str, &str); 4] = [
    ("tools/list", "tools"),
    ("prompts/list", "prompts"),
    ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates"),
];

/// What every server of `registry` lists, as clients see it (`tools/list`, `prompts/list`,
/// `resources/list`, `resources/templates/list`, every page), keyed by server name: the
/// content of a snapshot file.
pub async fn listings(registry: &Registry) -> Value {
    let mut servers = Map::new();
    for name in registry.server_names() {
        let mut server = Map::new();
        for (method, member) in LISTINGS {
            let items = list_all(registry, &name, method, member).await;
            if !items.is_empty() {
                server.insert(member.to_owned(), Value::Array(items));
            }
        }
        servers.insert(name, Value::Object(server));
    }
    json!({ "servers": servers })
}

/// Every page of one listing (an error, such as a method the server does not serve, lists
/// nothing).
async fn list_all(registry: &Registry, server: &str, method: &str, member: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1.. {
        let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let Some(mut reply) = registry.handle_mcp_message(server, message).await else {
            break;
        };
        let Some(result) = reply.get_mut("result") else {
            break;
        };
        if let Some(Value::Array(page)) = result.get_mut(member).map(Value::take) {
            items.extend(page);
        }
        cursor = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    items
}

/// Fails (panics, as an assertion does) when `registry`'s [`listings`] differ from the
/// snapshot in the JSON file at `path`, naming each difference by where it is (a JSON pointer,
/// with listed items named by their name or URI: `/servers/math/tools[add]/inputSchema`) and saying
/// how to accept the change. With [`SNAPSHOT_UPDATE_ENV`]`=1` the file is written instead; a
/// missing file is written and the test fails once, so that a new snapshot is reviewed before
/// it is committed.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use mcp_registry::{Registry, Server, Tool, testing::assert_listings_snapshot};
/// let hi = Tool::new("hi", "Say hi", serde_json::json!({"type": "object"}), |_| async { "hi" }).unwrap();
/// let registry = Registry::from_servers([Server::new("greet", None, [hi]).unwrap()]);
/// let path = std::env::temp_dir().join("greet-listings-doc.json");
/// std::fs::write(&path, serde_json::to_string(&mcp_registry::testing::listings(&registry).await).unwrap()).unwrap();
/// assert_listings_snapshot(&registry, &path).await; // unchanged: passes
/// # }
/// ```
pub async fn assert_listings_snapshot(registry: &Registry, path: impl AsRef<Path>) {
    let path = path.as_ref();
    let now = listings(registry).await;
    let update = std::env::var(SNAPSHOT_UPDATE_ENV).is_ok_and(|v| v == "1");
    let written = match std::fs::read_to_string(path) {
        Ok(text) if !update => Some(text),
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("cannot read the listing snapshot {}: {e}", path.display()),
    };
    let Some(written) = written else {
        write(path, &now);
        assert!(
            update,
            "no listing snapshot at {}: it has been written now; review it, commit it, and run the test again",
            path.display()
        );
        return;
    };
    let before: Value = serde_json::from_str(&written).unwrap_or_else(|e| {
        panic!(
            "the listing snapshot {} is not JSON ({e}): delete it, or run with {SNAPSHOT_UPDATE_ENV}=1",
            path.display()
        )
    });
    let mut differences = Vec::new();
    diff(&before, &now, &mut String::new(), &mut differences);
    assert!(
        differences.is_empty(),
        "the listings differ from the snapshot {} at:\n  {}\nif the change is meant, run the test with {SNAPSHOT_UPDATE_ENV}=1 and commit the file",
        path.display(),
        differences.join("\n  ")
    );
}

fn write(path: &Path, listings: &Value) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    }
    let mut text = serde_json::to_string_pretty(listings).unwrap_or_default();
    text.push('\n');
    std::fs::write(path, text)
        .unwrap_or_else(|e| panic!("cannot write the listing snapshot {}: {e}", path.display()));
}

/// The most differences a failure lists.
const MAX_DIFFERENCES: usize = 20;

/// Collects where `before` and `now` differ, as JSON pointers (RFC 6901), except that an
/// element of a list of named items (tools, prompts, resources, templates, prompt arguments)
/// is named by its identity (`tools[add]`) rather than its position, so that adding one tool
/// reports that tool and not every position after it.
fn diff(before: &Value, now: &Value, at: &mut String, out: &mut Vec<String>) {
    if out.len() >= MAX_DIFFERENCES {
        return;
    }
    match (before, now) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let len = at.len();
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                diff_member(a.get(key), b.get(key), at, out);
                at.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) => match (identities(a), identities(b)) {
            (Some(ids_a), Some(ids_b)) => diff_named(a, &ids_a, b, &ids_b, at, out),
            _ => {
                for i in 0..a.len().max(b.len()) {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    diff_member(a.get(i), b.get(i), at, out);
                    at.truncate(len);
                }
            }
        },
        (a, b) if a != b => out.push(format!("{at}: {a} -> {b}")),
        _ => {}
    }
}

/// One member (or element) on either side: compared, or reported added or removed.
fn diff_member(
    before: Option<&Value>,
    now: Option<&Value>,
    at: &mut String,
    out: &mut Vec<String>,
) {
    match (before, now) {
        (Some(x), Some(y)) => diff(x, y, at, out),
        (Some(_), None) => out.push(format!("{at} (removed)")),
        (None, Some(_)) => out.push(format!("{at} (added)")),
        (None, None) => {}
    }
}

/// The members that name a listed item, most specific first.
const IDENTITY_KEYS: [&str; 3] = ["uriTemplate", "uri", "name"];

/// Each element's identity, when every element is an object naming itself by the same
/// member and no two share a name; `None` for other lists (compared by position).
fn identities(items: &[Value]) -> Option<Vec<&str>> {
    let first = items.first()?;
    let key = IDENTITY_KEYS
        .into_iter()
        .find(|k| first.get(k).is_some_and(Value::is_string))?;
    let ids: Vec<&str> = items
        .iter()
        .map(|item| item.get(key).and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let unique: std::collections::HashSet<&str> = ids.iter().copied().collect();
    (unique.len() == ids.len()).then_some(ids)
}

/// Two lists of named items, matched by name: each item added, removed or changed is reported
/// once under its name, and a reordering of the same items as such.
fn diff_named(
    a: &[Value],
    ids_a: &[&str],
    b: &[Value],
    ids_b: &[&str],
    at: &mut String,
    out: &mut Vec<String>,
) {
    let find = |ids: &[&str], id: &str| ids.iter().position(|x| *x == id);
    let mut names: Vec<&str> = ids_a.to_vec();
    names.extend(ids_b.iter().filter(|id| find(ids_a, id).is_none()));
    for name in names {
        let len = at.len();
        at.push_str(&format!("[{name}]"));
        let before = find(ids_a, name).map(|i| &a[i]);
        let now = find(ids_b, name).map(|i| &b[i]);
        diff_member(before, now, at, out);
        at.truncate(len);
    }
    let kept_a: Vec<&&str> = ids_a
        .iter()
        .filter(|id| find(ids_b, id).is_some())
        .collect();
    let kept_b: Vec<&&str> = ids_b
        .iter()
        .filter(|id| find(ids_a, id).is_some())
        .collect();
    if kept_a != kept_b && out.len() < MAX_DIFFERENCES {
        out.push(format!("{at}: order changed"));
    }
}

#[cfg(test)]
mod tests {
    use super::diff;
    use serde_json::json;

    fn differences(before: serde_json::Value, now: serde_json::Value) -> Vec<String> {
        let mut out = Vec::new();
        diff(&before, &now, &mut String::new(), &mut out);
        out
    }

    #[test]
    fn a_tool_added_first_is_named_once_not_every_position_after_it() {
        let tool = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
        let before = json!({"tools": [tool("b"), tool("c"), tool("d")]});
        let now = json!({"tools": [tool("a"), tool("b"), tool("c"), tool("d")]});
        assert_eq!(differences(before, now), ["/tools[a] (added)"]);
    }

    #[test]
    fn a_changed_or_removed_item_is_named_and_plain_lists_stay_positional() {
        let before = json!({"resources": [{"uri": "x://1", "name": "one"}, {"uri": "x://2", "name": "two"}],
                            "required": ["a", "b"]});
        let now = json!({"resources": [{"uri": "x://2", "name": "deux"}], "required": ["a", "c"]});
        assert_eq!(
            differences(before, now),
            [
                "/required/1: \"b\" -> \"c\"",
                "/resources[x://1] (removed)",
                "/resources[x://2]/name: \"two\" -> \"deux\""
            ]
        );
    }

    #[test]
    fn the_same_items_in_another_order_are_reported_as_reordered() {
        let before = json!([{"name": "a"}, {"name": "b"}]);
        let now = json!([{"name": "b"}, {"name": "a"}]);
        assert_eq!(differences(before, now), [": order changed"]);
    }
}
