//! Skills read from disk: a bundle is a directory named after its skill, holding `SKILL.md`
//! and any other files (in subdirectories too).

use std::path::Path;

use super::{MAX_FILES, MAX_TOTAL_SIZE, SKILL_FILE, Skill, SkillError};

impl Skill {
    /// The skill bundled in directory `dir`: its `SKILL.md` and every other regular file under
    /// it (hidden files and directories, whose names start with `.`, and symbolic links left
    /// out). The directory must be named after the skill.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Skill, SkillError> {
        let dir = dir.as_ref();
        let skill_md =
            std::fs::read(dir.join(SKILL_FILE)).map_err(|e| io(&dir.join(SKILL_FILE), e))?;
        let skill_md = String::from_utf8(skill_md).map_err(|_| SkillError::Io {
            path: dir.join(SKILL_FILE).display().to_string(),
            message: "SKILL.md is not UTF-8 text".to_owned(),
        })?;
        let mut builder = Skill::builder(skill_md);
        builder.at = dir.display().to_string();
        builder.dir_name = Some(
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        let mut files = Vec::new();
        collect(dir, "", &mut files)?;
        for (path, contents) in files {
            builder = builder.file(path, contents);
        }
        builder.build()
    }

    /// Every skill bundle directly under `root`: each subdirectory that holds a `SKILL.md`,
    /// in name order (the others are left out).
    pub fn load_dir(root: impl AsRef<Path>) -> Result<Vec<Skill>, SkillError> {
        let root = root.as_ref();
        let mut dirs = Vec::new();
        for entry in std::fs::read_dir(root).map_err(|e| io(root, e))? {
            let entry = entry.map_err(|e| io(root, e))?;
            let path = entry.path();
            if path.is_dir() && path.join(SKILL_FILE).is_file() {
                dirs.push(path);
            }
        }
        dirs.sort();
        dirs.iter().map(Skill::from_dir).collect()
    }
}

fn io(path: &Path, e: std::io::Error) -> SkillError {
    SkillError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Adds the regular files under `dir` (at `prefix` in the skill) to `files`, but the root's
/// `SKILL.md` and hidden entries; refuses a bundle with more files than a skill may have.
fn collect(dir: &Path, prefix: &str, files: &mut Vec<(String, Vec<u8>)>) -> Result<(), SkillError> {
    for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || (prefix.is_empty() && name == SKILL_FILE) {
            continue;
        }
        let path = entry.path();
        let relative = format!("{prefix}{name}");
        let kind = entry.file_type().map_err(|e| io(&path, e))?;
        if kind.is_dir() {
            collect(&path, &format!("{relative}/"), files)?;
        } else if kind.is_file() {
            let len = entry.metadata().map_err(|e| io(&path, e))?.len();
            let so_far: u64 = files.iter().map(|(_, c)| c.len() as u64).sum();
            if files.len() >= MAX_FILES || so_far + len > MAX_TOTAL_SIZE {
                return Err(SkillError::Io {
                    path: dir.display().to_string(),
                    message: format!(
                        "over a skill's limits ({MAX_FILES} files, {MAX_TOTAL_SIZE} bytes): split the bundle"
                    ),
                });
            }
            files.push((relative, std::fs::read(&path).map_err(|e| io(&path, e))?));
        }
    }
    Ok(())
}
