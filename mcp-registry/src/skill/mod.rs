//! Agent skills served over MCP: the Skills extension (SEP-2640,
//! `io.modelcontextprotocol/skills`).
//!
//! A [`Skill`] is a `SKILL.md` (YAML front matter with `name` and `description`, then
//! instructions) and the files beside it, made from code ([`Skill::builder`]) or read from a
//! bundle directory ([`Skill::from_dir`], [`Skill::load_dir`]). Attached to a server with
//! [`ServerBuilder::skill`](crate::ServerBuilder::skill), its files become the server's
//! resources at `skill://<name>/<path>` (read with `resources/read`, through the registry's
//! layers, approval and time limit like any resource), and the server answers `skills/list`,
//! `skills/get` (each skill's entry: its front matter and every file's SHA-256 digest and
//! size) and `resources/directory/read`, declaring the extension in its capabilities.
//!
//! The client side ([`Client::list_skills`](crate::client::Client::list_skills),
//! [`Client::load_skill`](crate::client::Client::load_skill)) fetches nothing ahead of need
//! and refuses a file whose size, digest or front matter differs from the entry
//! ([`verify_file`], [`verify_skill_md`]).

mod dir;
mod frontmatter;
mod verify;
mod wire;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::Digest as _;

pub use frontmatter::{FrontmatterError, parse_frontmatter};
pub use verify::{SkillVerifyError, skill_md_body, verify_file, verify_skill_md};
pub use wire::{
    DirectoryReadParams, DirectoryReadResult, GetSkillParams, GetSkillResult, ListSkillsParams,
    ListSkillsResult, SkillEntry, SkillFileEntry, SkillResources, SkillsSettings,
};

use crate::protocol::{ReadResourceResult, ResourceContents, ResourceDescriptor};
use crate::resource::{Resource, ResourceHandlerResult, ResourceRequest};

/// The extension's identifier, the key of its settings in `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/skills";
/// The URI scheme of skill files.
pub const SKILL_SCHEME: &str = "skill://";
/// The file every skill has at its root.
pub const SKILL_FILE: &str = "SKILL.md";
/// The MIME type of a directory in `resources/directory/read`.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// Most files a skill may have, `SKILL.md` included (the extension's limit).
pub const MAX_FILES: usize = 512;
/// Most bytes a skill's files may add up to: 16 MiB (the extension's limit).
pub const MAX_TOTAL_SIZE: u64 = 16 * 1024 * 1024;

/// The extension's methods.
pub mod method {
    /// `skills/list`: a page of the server's skills.
    pub const SKILLS_LIST: &str = "skills/list";
    /// `skills/get`: one skill's entry by its `SKILL.md` URI.
    pub const SKILLS_GET: &str = "skills/get";
    /// `resources/directory/read`: a skill directory's direct children.
    pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
}

/// Why a skill could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The `SKILL.md` has no usable front matter.
    #[error("skill at {at}: {source}")]
    Frontmatter {
        /// The skill's directory, or `SKILL.md` for one made from code.
        at: String,
        /// What is wrong.
        source: FrontmatterError,
    },
    /// The front matter's `name` breaks the naming rules.
    #[error(
        "skill name {name:?} {reason}: use 1-64 lowercase letters, digits and single hyphens, not at either end"
    )]
    InvalidName {
        /// The name.
        name: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// A bundle's directory is not named after its skill.
    #[error("skill directory {dir:?} holds skill {name:?}: rename the directory to {name:?}")]
    NameMismatch {
        /// The directory.
        dir: String,
        /// The front matter's name.
        name: String,
    },
    /// A file's path cannot be a skill resource.
    #[error("skill {skill:?}: file path {path:?} {reason}")]
    InvalidPath {
        /// The skill.
        skill: String,
        /// The path.
        path: String,
        /// Why not.
        reason: &'static str,
    },
    /// Two files share a path.
    #[error("skill {skill:?} has two files at {path:?}")]
    DuplicateFile {
        /// The skill.
        skill: String,
        /// The path.
        path: String,
    },
    /// More files or bytes than the extension allows.
    #[error(
        "skill {skill:?} has {files} files and {bytes} bytes; a skill may have at most {MAX_FILES} files and {MAX_TOTAL_SIZE} bytes: split it"
    )]
    TooLarge {
        /// The skill.
        skill: String,
        /// Its files.
        files: usize,
        /// Their bytes.
        bytes: u64,
    },
    /// A bundle could not be read from disk.
    #[error("cannot read skill bundle {path:?}: {message}")]
    Io {
        /// The file or directory.
        path: String,
        /// Why.
        message: String,
    },
}

/// A skill: its `SKILL.md` and the files beside it, with their digests. Cheap to clone.
///
/// ```
/// use mcp_registry::skill::{Skill, SkillResources};
/// let skill = Skill::builder("---\nname: greet\ndescription: Greets people\n---\nSay hi.\n")
///     .file("references/TONE.md", "Warm.\n")
///     .build()
///     .unwrap();
/// assert_eq!(skill.uri(), "skill://greet/SKILL.md");
/// let SkillResources::Files(files) = &skill.entry().resources else { unreachable!() };
/// assert_eq!(files.len(), 2);
/// assert!(files[0].digest.starts_with("sha256:"));
/// ```
#[derive(Clone)]
pub struct Skill {
    inner: Arc<SkillInner>,
}

struct SkillInner {
    name: String,
    /// `skill://<name>`.
    root: String,
    entry: SkillEntry,
    /// One per file, `SKILL.md` first.
    resources: Vec<Resource>,
    /// Directory URI -> its direct children, sorted by URI.
    directories: BTreeMap<String, Vec<ResourceDescriptor>>,
}

impl fmt::Debug for Skill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Skill")
            .field("uri", &self.inner.entry.uri)
            .field("files", &self.inner.resources.len())
            .finish()
    }
}

impl Skill {
    /// Starts a skill from its `SKILL.md` text; its name is the front matter's `name`.
    pub fn builder(skill_md: impl Into<String>) -> SkillBuilder {
        SkillBuilder {
            skill_md: skill_md.into(),
            files: Vec::new(),
            at: SKILL_FILE.to_owned(),
            dir_name: None,
        }
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> &str {
        &self.inner.entry.uri
    }

    /// Its directory's URI, `skill://<name>`.
    pub fn root(&self) -> &str {
        &self.inner.root
    }

    /// Its entry, as `skills/list` and `skills/get` give it.
    pub fn entry(&self) -> &SkillEntry {
        &self.inner.entry
    }

    /// Its files as resources, `SKILL.md` first.
    pub fn resources(&self) -> &[Resource] {
        &self.inner.resources
    }

    /// The direct children of directory `uri` of this skill, when it is one.
    pub fn directory(&self, uri: &str) -> Option<&[ResourceDescriptor]> {
        self.inner.directories.get(uri).map(Vec::as_slice)
    }
}

/// Builds a [`Skill`] from code: its `SKILL.md`, then its other files.
#[derive(Debug, Clone)]
#[must_use = "call build() to get the skill"]
pub struct SkillBuilder {
    skill_md: String,
    files: Vec<(String, Vec<u8>)>,
    /// Where the skill came from, for errors.
    at: String,
    /// A bundle's directory name, which must be the skill's name.
    dir_name: Option<String>,
}

impl SkillBuilder {
    /// Adds a file at `path` relative to the skill's root (`references/FORMS.md`), served as
    /// text when it is UTF-8, else as a blob.
    pub fn file(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), contents.into()));
        self
    }

    /// The skill; refuses a `SKILL.md` without front matter (`name`, `description`), a name
    /// that breaks the naming rules, a bad or repeated path, and a skill over the limits.
    pub fn build(self) -> Result<Skill, SkillError> {
        let frontmatter =
            parse_frontmatter(&self.skill_md).map_err(|source| SkillError::Frontmatter {
                at: self.at.clone(),
                source,
            })?;
        let name = frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if let Some(reason) = name_problem(&name) {
            return Err(SkillError::InvalidName { name, reason });
        }
        if let Some(dir) = self.dir_name.filter(|d| *d != name) {
            return Err(SkillError::NameMismatch { dir, name });
        }
        let mut files = vec![(SKILL_FILE.to_owned(), self.skill_md.into_bytes())];
        for (path, contents) in self.files {
            check_path(&name, &path)?;
            files.push((path, contents));
        }
        files[1..].sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(pair) = files.windows(2).find(|p| p[0].0 == p[1].0) {
            let path = pair[0].0.clone();
            return Err(SkillError::DuplicateFile { skill: name, path });
        }
        let bytes: u64 = files.iter().map(|(_, c)| c.len() as u64).sum();
        if files.len() > MAX_FILES || bytes > MAX_TOTAL_SIZE {
            let files = files.len();
            return Err(SkillError::TooLarge {
                skill: name,
                files,
                bytes,
            });
        }
        Ok(assemble(name, frontmatter, files))
    }
}

/// The skill of `name` from its checked files (`SKILL.md` first).
fn assemble(name: String, frontmatter: Map<String, Value>, files: Vec<(String, Vec<u8>)>) -> Skill {
    let root = format!("{SKILL_SCHEME}{name}");
    let description = frontmatter
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut entries = Vec::with_capacity(files.len());
    let mut resources = Vec::with_capacity(files.len());
    let mut directories: BTreeMap<String, Vec<ResourceDescriptor>> = BTreeMap::new();
    directories.insert(root.clone(), Vec::new());
    for (path, contents) in files {
        let uri = format!("{root}/{path}");
        entries.push(SkillFileEntry {
            uri: uri.clone(),
            digest: digest(&contents),
            size: contents.len() as u64,
        });
        let described = (path == SKILL_FILE).then_some((name.as_str(), description.as_deref()));
        let resource = file_resource(&uri, &path, contents, described);
        add_to_directories(&mut directories, &root, &path, resource.descriptor());
        resources.push(resource);
    }
    for children in directories.values_mut() {
        children.sort_by(|a, b| a.uri.cmp(&b.uri));
    }
    let entry = SkillEntry {
        uri: format!("{root}/{SKILL_FILE}"),
        frontmatter,
        resources: SkillResources::Files(entries),
        meta: None,
    };
    Skill {
        inner: Arc::new(SkillInner {
            name,
            root,
            entry,
            resources,
            directories,
        }),
    }
}

/// Files the directory listing of `path`'s parents, creating each directory on the way.
fn add_to_directories(
    directories: &mut BTreeMap<String, Vec<ResourceDescriptor>>,
    root: &str,
    path: &str,
    file: &ResourceDescriptor,
) {
    let mut parent = root.to_owned();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, segment) in segments.iter().enumerate() {
        if i + 1 == segments.len() {
            directories.entry(parent).or_default().push(file.clone());
            return;
        }
        let dir = format!("{parent}/{segment}");
        if !directories.contains_key(&dir) {
            directories.insert(dir.clone(), Vec::new());
            directories
                .entry(parent)
                .or_default()
                .push(directory_descriptor(&dir, segment));
        }
        parent = dir;
    }
}

fn directory_descriptor(uri: &str, name: &str) -> ResourceDescriptor {
    ResourceDescriptor {
        uri: uri.to_owned(),
        name: name.to_owned(),
        title: None,
        description: None,
        mime_type: Some(DIRECTORY_MIME_TYPE.to_owned()),
        size: None,
        annotations: None,
        icons: Vec::new(),
        meta: None,
    }
}

/// The resource serving one file: `SKILL.md` named and described by its front matter
/// (`skill`), another file named by its path.
fn file_resource(
    uri: &str,
    path: &str,
    contents: Vec<u8>,
    skill: Option<(&str, Option<&str>)>,
) -> Resource {
    let mime_type = mime_type(path, &contents);
    let size = contents.len() as u64;
    let read = match String::from_utf8(contents) {
        Ok(text) => ResourceContents::text(uri, text),
        Err(e) => ResourceContents::blob(uri, e.as_bytes()),
    }
    .with_mime_type(mime_type);
    let name = skill.map_or(path, |(name, _)| name);
    let mut builder = Resource::builder(uri, name).mime_type(mime_type).size(size);
    if let Some((_, Some(description))) = skill {
        builder = builder.description(description);
    }
    let result: ResourceHandlerResult = Ok(ReadResourceResult::new(vec![read]));
    builder.build_checked(move |_: ResourceRequest| std::future::ready(result.clone()))
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`, as skill entries carry digests.
pub fn digest(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let hash = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The MIME type a file is served with, by its extension; else `text/plain` for UTF-8 and
/// `application/octet-stream` for other bytes.
fn mime_type(path: &str, contents: &[u8]) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("html" | "htm") => "text/html",
        Some("py") => "text/x-python",
        Some("sh") => "application/x-sh",
        Some("js") => "text/javascript",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(contents).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// What is wrong with a skill name, if anything (the Agent Skills naming rules).
fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 64 {
        return Some("is not 1-64 characters long");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Some("has a character other than a-z, 0-9 and -");
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Some("has a hyphen at an end or two in a row");
    }
    None
}

/// Refuses a file path that cannot be a resource under the skill's directory.
fn check_path(skill: &str, path: &str) -> Result<(), SkillError> {
    let reason = if path == SKILL_FILE {
        Some("is the skill's SKILL.md, which Skill::builder already has")
    } else if path
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        Some("must be relative, with no empty, `.` or `..` segment")
    } else if !path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~/".contains(&b))
    {
        Some("may only use letters, digits, `-`, `.`, `_`, `~` and `/`: rename the file")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(SkillError::InvalidPath {
            skill: skill.to_owned(),
            path: path.to_owned(),
            reason,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_hex() {
        assert_eq!(
            digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn names_follow_the_rules() {
        assert_eq!(name_problem("pdf-processing"), None);
        assert!(name_problem("PDF").is_some());
        assert!(name_problem("a--b").is_some());
        assert!(name_problem("-a").is_some());
        assert!(name_problem(&"a".repeat(65)).is_some());
    }

    #[test]
    fn directories_list_direct_children() {
        let skill = Skill::builder("---\nname: s\ndescription: d\n---\n")
            .file("references/a/B.md", "b")
            .file("scripts/run.sh", "echo")
            .build()
            .expect("skill");
        let root: Vec<_> = skill
            .directory("skill://s")
            .expect("root")
            .iter()
            .map(|d| d.uri.as_str())
            .collect();
        assert_eq!(
            root,
            [
                "skill://s/SKILL.md",
                "skill://s/references",
                "skill://s/scripts"
            ]
        );
        let refs = skill.directory("skill://s/references").expect("references");
        assert_eq!(refs[0].mime_type.as_deref(), Some(DIRECTORY_MIME_TYPE));
        assert!(skill.directory("skill://s/SKILL.md").is_none());
        let err = Skill::builder("---\nname: s\ndescription: d\n---\n")
            .file("../x", "")
            .build();
        assert!(matches!(err, Err(SkillError::InvalidPath { .. })));
    }
}
