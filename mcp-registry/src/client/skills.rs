//! [`Client`]'s side of the Skills extension (SEP-2640): list and get skill entries, and
//! read a skill's files only when asked, each verified against its entry before it is
//! handed over. Nothing is fetched ahead of need: listing reads no file, and loading a
//! skill reads its `SKILL.md` alone.

use base64::Engine as _;

use super::ClientError;
use super::driver::{Client, parse};
use super::pages::every_page;
use super::policy::RequestOptions;
use crate::protocol::{ResourceContents, ResourceDescriptor, params_of};
use crate::skill::{
    DirectoryReadParams, DirectoryReadResult, EXTENSION_ID, GetSkillParams, GetSkillResult,
    ListSkillsParams, ListSkillsResult, SkillEntry, SkillVerifyError, method, skill_md_body,
    verify_file, verify_skill_md,
};

/// A skill whose `SKILL.md` was read and verified (size, digest, front matter).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry it was verified against.
    pub entry: SkillEntry,
    /// The whole `SKILL.md`.
    pub text: String,
}

impl LoadedSkill {
    /// The instructions: the `SKILL.md` after its front matter.
    pub fn body(&self) -> &str {
        skill_md_body(&self.text)
    }
}

impl Client {
    /// Whether the server declared the Skills extension
    /// (`capabilities.extensions["io.modelcontextprotocol/skills"]`).
    pub fn serves_skills(&self) -> bool {
        self.server_capabilities()
            .and_then(|c| c.other.get("extensions").cloned())
            .is_some_and(|e| e.get(EXTENSION_ID).is_some())
    }

    /// Every skill entry the server lists (`skills/list`, following `nextCursor`); reads no
    /// skill file.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        every_page(method::SKILLS_LIST, |cursor| async move {
            let params = params_of(&ListSkillsParams { cursor });
            let result = self
                .run_request(
                    method::SKILLS_LIST,
                    Some(params),
                    &RequestOptions::default(),
                )
                .await?;
            let page: ListSkillsResult = parse(method::SKILLS_LIST, result)?;
            Ok((page.skills, page.next_cursor))
        })
        .await
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`).
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, ClientError> {
        let params = params_of(&GetSkillParams { uri: uri.into() });
        let result = self
            .run_request(method::SKILLS_GET, Some(params), &RequestOptions::default())
            .await?;
        let result: GetSkillResult = parse(method::SKILLS_GET, result)?;
        Ok(result.skill)
    }

    /// Loads a skill: reads its `SKILL.md` and verifies it against `entry` (size, digest,
    /// then every front matter field); a file that fails is refused with
    /// [`ClientError::Skill`], and nothing else of the skill is read.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, ClientError> {
        if entry.file(&entry.uri).is_none() {
            // Unverifiable (not listed, or "dynamic"): refused before anything is fetched.
            verify_file(entry, &entry.uri, &[])?;
        }
        let bytes = self.fetch_file(&entry.uri).await?;
        let text = String::from_utf8(bytes).map_err(|_| ClientError::InvalidResult {
            method: crate::protocol::method::RESOURCES_READ.to_owned(),
            detail: format!("{} is not UTF-8 text", entry.uri),
        })?;
        verify_skill_md(entry, &text)?;
        Ok(LoadedSkill {
            entry: entry.clone(),
            text,
        })
    }

    /// One file of a loaded skill, read when needed and verified against `entry` (size,
    /// then digest): its raw bytes, or [`ClientError::Skill`] saying why it was refused.
    pub async fn read_skill_file(
        &self,
        entry: &SkillEntry,
        uri: &str,
    ) -> Result<Vec<u8>, ClientError> {
        if entry.file(uri).is_none() {
            // Refused before anything is fetched.
            verify_file(entry, uri, &[])?;
        }
        let bytes = self.fetch_file(uri).await?;
        verify_file(entry, uri, &bytes)?;
        Ok(bytes)
    }

    /// The direct children of a skill directory (`resources/directory/read`, every page),
    /// a subdirectory with MIME type `inode/directory`.
    pub async fn read_skill_directory(
        &self,
        uri: &str,
    ) -> Result<Vec<ResourceDescriptor>, ClientError> {
        every_page(method::RESOURCES_DIRECTORY_READ, |cursor| async move {
            let params = params_of(&DirectoryReadParams {
                uri: uri.into(),
                cursor,
            });
            let result = self
                .run_request(
                    method::RESOURCES_DIRECTORY_READ,
                    Some(params),
                    &RequestOptions::default(),
                )
                .await?;
            let page: DirectoryReadResult = parse(method::RESOURCES_DIRECTORY_READ, result)?;
            Ok((page.resources, page.next_cursor))
        })
        .await
    }

    /// The raw bytes `resources/read` gives for `uri` (text as UTF-8, a blob decoded).
    async fn fetch_file(&self, uri: &str) -> Result<Vec<u8>, ClientError> {
        let result = self.read_resource(uri).await?;
        let contents = result
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .or(result.contents.first())
            .ok_or_else(|| SkillVerifyError::NoContent {
                uri: uri.to_owned(),
            })?;
        match contents {
            ResourceContents::Text(t) => Ok(t.text.clone().into_bytes()),
            ResourceContents::Blob(b) => base64::engine::general_purpose::STANDARD
                .decode(&b.blob)
                .map_err(|e| ClientError::InvalidResult {
                    method: crate::protocol::method::RESOURCES_READ.to_owned(),
                    detail: format!("{uri}: blob is not base64: {e}"),
                }),
        }
    }
}
