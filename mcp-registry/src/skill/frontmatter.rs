//! A `SKILL.md`'s YAML front matter: the block between a leading `---` line and the next
//! `---` line, read as a JSON object (`serde_yaml_ng`).

use serde_json::{Map, Value};

/// Why a `SKILL.md` has no usable front matter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The text does not start with a `---` line, or the block is never closed.
    #[error(
        "SKILL.md must begin with YAML front matter: a `---` line, `name:` and `description:`, then a closing `---` line"
    )]
    Missing,
    /// The block is not YAML, or not a mapping with string keys.
    #[error("SKILL.md front matter is not a YAML mapping: {0}")]
    Invalid(String),
    /// A required field is missing or not a non-empty string.
    #[error("SKILL.md front matter needs a non-empty string `{0}`")]
    MissingField(&'static str),
}

/// The front matter of `text` (a `SKILL.md`), as a JSON object with a non-empty `name` and
/// `description`.
pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let block = frontmatter_block(text).ok_or(FrontmatterError::Missing)?;
    let map: Map<String, Value> = if block.trim().is_empty() {
        Map::new()
    } else {
        serde_yaml_ng::from_str(block).map_err(|e| FrontmatterError::Invalid(e.to_string()))?
    };
    for field in ["name", "description"] {
        if map
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(FrontmatterError::MissingField(field));
        }
    }
    Ok(map)
}

/// The YAML between the opening and closing `---` lines (a leading BOM and CRLF line ends
/// allowed).
fn frontmatter_block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_block_between_the_fences() {
        let map = parse_frontmatter("---\nname: a\ndescription: b\nmetadata:\n  k: 1\n---\nbody\n")
            .expect("front matter");
        assert_eq!(map["name"], "a");
        assert_eq!(map["metadata"]["k"], 1);
        let crlf = parse_frontmatter("\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\n");
        assert_eq!(crlf.expect("crlf")["description"], "b");
    }

    #[test]
    fn refuses_what_is_not_front_matter() {
        assert_eq!(parse_frontmatter("# no"), Err(FrontmatterError::Missing));
        assert_eq!(
            parse_frontmatter("---\nname: a\n"),
            Err(FrontmatterError::Missing)
        );
        assert_eq!(
            parse_frontmatter("---\nname: a\n---\n"),
            Err(FrontmatterError::MissingField("description"))
        );
        assert!(matches!(
            parse_frontmatter("---\n- a\n---\n"),
            Err(FrontmatterError::Invalid(_))
        ));
    }
}
