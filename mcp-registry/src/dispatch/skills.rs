//! The Skills extension (SEP-2640) for a server with skills: `skills/list`, `skills/get`,
//! `resources/directory/read`, and its declaration in the capabilities. `skills/get` runs
//! through the registry's pipeline (scope, layers, approval, guard: `registry/skills.rs`);
//! skill files are the server's resources, read with `resources/read` (`resources.rs`)
//! through the same pipeline; the listings are answered here, as `tools/list` is.
//!
//! One request kind in two layers, named alike: its run through the registry (in-process API and pipeline) in `registry/skills.rs`.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::page::{Listing, Window};
use super::{Answer, Body, Dispatcher, Parts, Routed, Step, invalid_params, outcome, read_params};
use crate::protocol::{ErrorObject, ProtocolVersion};
use crate::registry::CallOptions;
use crate::registry::scope::RequestInfo;
use crate::server::Server;
use crate::skill::{
    DirectoryReadParams, DirectoryReadResult, EXTENSION_ID, GetSkillParams, GetSkillResult,
    ListSkillsParams, SkillsSettings, method,
};

/// The method-specific part of a skills result.
pub(crate) enum SkillsBody {
    List(SkillsPage),
    Get(Box<GetSkillResult>),
    Directory(DirectoryReadResult),
}

/// A page of a server's skills.
pub(crate) struct SkillsPage {
    server: Server,
    window: Window,
}

/// Adds `extensions["io.modelcontextprotocol/skills"]` (with `directoryRead`) to `other`
/// for a server with skills.
pub(crate) fn declare(server: &Server, other: &mut Map<String, Value>) {
    if server.skills().is_empty() {
        return;
    }
    let settings = SkillsSettings {
        directory_read: Some(true),
    };
    if let Ok(settings) = serde_json::to_value(settings) {
        super::declare_extension(other, EXTENSION_ID, settings);
    }
}

impl Dispatcher<'_> {
    fn list_skills(
        &self,
        server: &Server,
        version: Option<ProtocolVersion>,
        params: Map<String, Value>,
    ) -> Result<SkillsBody, ErrorObject> {
        let ListSkillsParams { cursor } = read_params(method::SKILLS_LIST, params)?;
        let total = server.skills().len();
        let window = self.window(
            server,
            Listing::Skills,
            method::SKILLS_LIST,
            cursor.as_deref(),
            total,
            version,
        )?;
        Ok(SkillsBody::List(SkillsPage {
            server: server.clone(),
            window,
        }))
    }

    /// Starts a `skills/get` through the registry's pipeline (layers, approval, guard).
    fn start_get_skill(
        &self,
        server: &Server,
        params: Map<String, Value>,
        options: &mut CallOptions,
        info: RequestInfo,
    ) -> Result<Step, ErrorObject> {
        let GetSkillParams { uri } = read_params(method::SKILLS_GET, params)?;
        let version = info.protocol_version;
        let cache = (version == Some(ProtocolVersion::MODERN)).then(|| self.cache_hints(server));
        let getting = self.registry.invoke_skill(server, &uri, options, info);
        let server = server.clone();
        Ok(Step::Waiting(Box::pin(async move {
            match getting.await {
                None => Answer::Suppressed,
                Some(Err(error)) => Answer::Error(error),
                Some(Ok(skill)) => {
                    let body = SkillsBody::Get(Box::new(GetSkillResult { skill, cache }));
                    Answer::Result(outcome(&server, version, Body::Skills(body)))
                }
            }
        })))
    }
}

/// `resources/directory/read`: the direct children of a skill's directory, on one page
/// (a skill has at most 512 files).
fn read_directory(server: &Server, params: Map<String, Value>) -> Result<SkillsBody, ErrorObject> {
    let DirectoryReadParams { uri, cursor } =
        read_params(method::RESOURCES_DIRECTORY_READ, params)?;
    if let Some(cursor) = cursor {
        return Err(invalid_params(format!(
            "invalid cursor {cursor:?} for {}: this server answers a directory on one page",
            method::RESOURCES_DIRECTORY_READ
        )));
    }
    let Some(children) = server.skills().iter().find_map(|s| s.directory(&uri)) else {
        return Err(invalid_params(format!(
            "{uri:?} is not a directory of a skill this server serves: give a skill's directory, e.g. skill://<name>, without a trailing slash"
        )));
    };
    Ok(SkillsBody::Directory(DirectoryReadResult {
        resources: children.to_vec(),
        next_cursor: None,
    }))
}

impl Serialize for SkillsBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let page = match self {
            SkillsBody::Get(result) => return result.serialize(serializer),
            SkillsBody::Directory(result) => return result.serialize(serializer),
            SkillsBody::List(page) => page,
        };
        let skills = page.server.skills();
        let entries = skills
            .get(page.window.start..page.window.end)
            .unwrap_or(&[]);
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("skills", &Entries(entries))?;
        page.window.write_tail(&mut map)?;
        map.end()
    }
}

/// Skills written as their entries.
struct Entries<'a>(&'a [crate::skill::Skill]);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(crate::skill::Skill::entry))
    }
}

/// `skills/list`, `skills/get` and `resources/directory/read`, for a server with skills
/// (-32601 for one without: it does not declare the extension).
pub(crate) fn serve(mut request: Routed<'_>, options: &mut CallOptions) -> Step {
    if request.server.skills().is_empty() {
        return request.not_found();
    }
    if request.method == method::SKILLS_GET {
        let (parts, info) = request.split();
        let Parts {
            registry,
            server,
            params,
            ..
        } = parts;
        return Dispatcher::new(registry)
            .start_get_skill(server, params, options, info)
            .unwrap_or_else(|e| Step::Answered(Answer::Error(e)));
    }
    let params = std::mem::take(&mut request.params);
    let (server, version) = (&request.server, request.version);
    let body = match &*request.method {
        method::SKILLS_LIST => request.dispatcher().list_skills(server, version, params),
        _ => read_directory(server, params),
    };
    request.answer(body.map(Body::Skills))
}
