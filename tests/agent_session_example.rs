//! Drives `examples/agent_session.rs` in-process and checks its transcript.

#[allow(dead_code)]
#[path = "../examples/agent_session.rs"]
mod agent_session;

use serde_json::Value;

/// The transcript's messages: (who, message), notes left out.
fn messages(transcript: &[String]) -> Vec<(&str, Value)> {
    transcript
        .iter()
        .filter_map(|line| {
            let (who, json) = line.split_once("> ")?;
            let message = serde_json::from_str(json)
                .unwrap_or_else(|e| panic!("line {line:?} is not JSON: {e}"));
            Some((who, message))
        })
        .collect()
}

/// The `mcp_response` the host sent for each runtime request on `server` with `method`.
fn replies<'a>(messages: &'a [(&str, Value)], server: &str, method: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|(who, m)| {
            *who == "runtime"
                && m["request"]["server_name"] == server
                && m["request"]["message"]["method"] == method
        })
        .map(|(_, request)| {
            let id = &request["request_id"];
            let (_, reply) = messages
                .iter()
                .find(|(who, m)| *who == "host" && m["response"]["request_id"] == *id)
                .unwrap_or_else(|| panic!("no reply to {request}"));
            assert_eq!(reply["type"], "control_response");
            assert_eq!(reply["response"]["subtype"], "success");
            &reply["response"]["response"]["mcp_response"]
        })
        .collect()
}

#[tokio::test]
async fn the_runtime_sees_the_toggle_between_turns() {
    let transcript = agent_session::run_session(false).await;
    let messages = messages(&transcript);

    // The host announces its SDK servers at initialize and in the CLI config.
    let (who, init) = &messages[0];
    assert_eq!(*who, "host");
    assert_eq!(init["request"]["subtype"], "initialize");
    assert_eq!(
        init["request"]["sdkMcpServers"],
        serde_json::json!(["math", "weather"])
    );
    assert!(transcript[0].contains(r#"{"mcpServers":{"math":{"name":"math","type":"sdk"},"weather":{"name":"weather","type":"sdk"}}}"#));

    // Every runtime request got exactly one reply carrying its request_id.
    let requests = messages
        .iter()
        .filter(|(w, m)| *w == "runtime" && m["type"] == "control_request")
        .count();
    let responses = messages
        .iter()
        .filter(|(w, m)| *w == "host" && m["type"] == "control_response")
        .count();
    assert_eq!(requests, responses);

    lists_follow_the_toggle(&messages);
    calls_follow_the_toggle(&messages);

    // The toggle happens between the two turns, and the runtime reports what it saw.
    let toggle = transcript
        .iter()
        .position(|l| l.contains("toggle_server"))
        .unwrap();
    let first_result = transcript
        .iter()
        .position(|l| l.contains(r#""type":"result""#))
        .unwrap();
    assert!(first_result < toggle);
    let offered: Vec<_> = transcript
        .iter()
        .filter(|l| l.contains("tools offered to the model"))
        .collect();
    assert_eq!(offered.len(), 2);
    assert!(offered[0].contains("mcp__weather__forecast"));
    assert!(!offered[1].contains("mcp__weather__forecast"));
    assert!(transcript.last().unwrap().contains("session over"));
}

/// tools/list: weather lists its tool before the toggle and is an error naming it after;
/// math's list leaves out what the filter hides.
fn lists_follow_the_toggle(messages: &[(&str, Value)]) {
    // tools/list: before the toggle weather lists its tool, after it is an error naming it.
    let weather_lists = replies(messages, "weather", "tools/list");
    assert_eq!(weather_lists.len(), 2);
    assert_eq!(weather_lists[0]["result"]["tools"][0]["name"], "forecast");
    assert!(weather_lists[1]["result"].is_null());
    assert!(
        weather_lists[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("weather")
    );
    assert_ne!(weather_lists[0], weather_lists[1]);

    // The filter hides divide from math's list on this path too.
    for list in replies(messages, "math", "tools/list") {
        let names: Vec<_> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(names, ["add"]);
    }
}

/// tools/call: math answers in both turns; weather before the toggle, not after.
fn calls_follow_the_toggle(messages: &[(&str, Value)]) {
    // Calls: math works in both turns; weather works before the toggle and fails after.
    let math_calls = replies(messages, "math", "tools/call");
    assert!(
        math_calls
            .iter()
            .all(|r| r["result"]["content"][0]["text"] == "5")
    );
    let weather_calls = replies(messages, "weather", "tools/call");
    assert_eq!(
        weather_calls[0]["result"]["content"][0]["text"],
        "Sunny in Paris"
    );
    assert!(
        weather_calls[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disabled")
    );
}
