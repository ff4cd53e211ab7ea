//! What a client checks before it uses a skill file: the bytes a server sent against the
//! entry it listed (size, then SHA-256 digest) and, for `SKILL.md`, its front matter against
//! the entry's, field by field. Content that fails is not to be used.

use serde_json::Value;

use super::{FrontmatterError, SkillEntry, SkillResources, digest, parse_frontmatter};

/// Why a skill file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillVerifyError {
    /// The entry does not list the file, so there is nothing to verify it against.
    #[error(
        "skill {skill}: {uri} is not one of the files its entry lists; read only listed files (get the entry anew with skills/get if the skill changed)"
    )]
    NotListed {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// The file asked for.
        uri: String,
    },
    /// The entry's resources are `"dynamic"`: no digest to verify against.
    #[error(
        "skill {skill} publishes no file manifest (resources: \"dynamic\"), so its files cannot be verified; read them with read_resource if you trust the server"
    )]
    Dynamic {
        /// The skill's `SKILL.md` URI.
        skill: String,
    },
    /// The read returned no contents for the file.
    #[error("resources/read of {uri} returned no contents for it")]
    NoContent {
        /// The file.
        uri: String,
    },
    /// The file's length differs from the entry's `size`.
    #[error(
        "{uri} is {actual} bytes but its skill entry says {expected}: refused, the content is not what the server listed"
    )]
    SizeMismatch {
        /// The file.
        uri: String,
        /// The entry's size.
        expected: u64,
        /// The bytes received.
        actual: u64,
    },
    /// The file's SHA-256 differs from the entry's `digest`.
    #[error(
        "{uri} hashes to {actual} but its skill entry says {expected}: refused, the content is not what the server listed"
    )]
    DigestMismatch {
        /// The file.
        uri: String,
        /// The entry's digest.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// The `SKILL.md` has no usable front matter.
    #[error("{uri}: {source}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// What is wrong.
        source: FrontmatterError,
    },
    /// A front matter field of the `SKILL.md` differs from the entry's.
    #[error(
        "{uri}: front matter field `{field}` is {file} in the file but {entry} in the skill entry: refused, the skill is not loaded"
    )]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The field.
        field: String,
        /// Its value in the file (`null`: absent).
        file: String,
        /// Its value in the entry (`null`: absent).
        entry: String,
    },
}

/// Checks `bytes`, read from `uri`, against `entry`'s listing of that file: its size first
/// (a cheap refusal), then its digest.
pub fn verify_file(entry: &SkillEntry, uri: &str, bytes: &[u8]) -> Result<(), SkillVerifyError> {
    let listed = match &entry.resources {
        SkillResources::Dynamic => {
            return Err(SkillVerifyError::Dynamic {
                skill: entry.uri.clone(),
            });
        }
        SkillResources::Files(_) => entry.file(uri).ok_or_else(|| SkillVerifyError::NotListed {
            skill: entry.uri.clone(),
            uri: uri.to_owned(),
        })?,
    };
    let actual = bytes.len() as u64;
    if actual != listed.size {
        return Err(SkillVerifyError::SizeMismatch {
            uri: uri.to_owned(),
            expected: listed.size,
            actual,
        });
    }
    let actual = digest(bytes);
    if actual != listed.digest {
        return Err(SkillVerifyError::DigestMismatch {
            uri: uri.to_owned(),
            expected: listed.digest.clone(),
            actual,
        });
    }
    Ok(())
}

/// Checks a skill's `SKILL.md` text: its bytes as [`verify_file`] does, then its front
/// matter, which must equal the entry's in every field.
pub fn verify_skill_md(entry: &SkillEntry, text: &str) -> Result<(), SkillVerifyError> {
    verify_file(entry, &entry.uri, text.as_bytes())?;
    let file = parse_frontmatter(text).map_err(|source| SkillVerifyError::Frontmatter {
        uri: entry.uri.clone(),
        source,
    })?;
    let mut fields: Vec<&String> = file.keys().chain(entry.frontmatter.keys()).collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        let (in_file, in_entry) = (file.get(field), entry.frontmatter.get(field));
        if in_file.unwrap_or(&Value::Null) != in_entry.unwrap_or(&Value::Null) {
            return Err(SkillVerifyError::FrontmatterMismatch {
                uri: entry.uri.clone(),
                field: field.clone(),
                file: in_file.unwrap_or(&Value::Null).to_string(),
                entry: in_entry.unwrap_or(&Value::Null).to_string(),
            });
        }
    }
    Ok(())
}

/// The instructions of a `SKILL.md`: what follows its front matter (the whole text when it
/// has none).
pub fn skill_md_body(text: &str) -> &str {
    let trimmed = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = trimmed
        .strip_prefix("---\n")
        .or_else(|| trimmed.strip_prefix("---\r\n"))
    else {
        return text;
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end_matches(['\n', '\r', ' ', '\t']) == "---" {
            return &rest[offset..];
        }
    }
    text
}
