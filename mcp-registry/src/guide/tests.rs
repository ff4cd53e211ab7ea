//! The documentation's promises about the manifest: every feature listed where a user reads.

/// The features `[features]` declares, in order, without `default`.
fn manifest_features() -> Vec<String> {
    let manifest = include_str!("../../Cargo.toml");
    let section = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("Cargo.toml has [features]");
    let section = section.split("\n[").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|line| line.split_once(" = "))
        .map(|(name, _)| name.trim().to_owned())
        .filter(|name| !name.starts_with('#') && name != "default")
        .collect()
}

/// The first column of the feature table after `heading` in `text`: rows "| `name` | .. |".
fn listed_features(text: &str, heading: &str) -> Vec<String> {
    let after = text
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("no {heading:?} section"));
    after
        .lines()
        .map(|line| line.trim_start_matches("//!").trim())
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .filter_map(|row| {
            row.strip_prefix("| `")?
                .split_once('`')
                .map(|(name, _)| name.to_owned())
        })
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[test]
fn the_readme_lists_every_feature_of_the_manifest() {
    let declared = manifest_features();
    assert!(
        declared.len() >= 10,
        "features read from Cargo.toml: {declared:?}"
    );
    let listed = listed_features(include_str!("../../README.md"), "\n## Features");
    assert_eq!(
        sorted(listed),
        sorted(declared),
        "README.md's feature table against Cargo.toml"
    );
}

#[test]
fn the_crate_docs_list_every_feature_of_the_manifest() {
    let listed = listed_features(include_str!("../lib.rs"), "\n//! # Features");
    assert_eq!(
        sorted(listed),
        sorted(manifest_features()),
        "lib.rs's feature table against Cargo.toml"
    );
}

#[test]
fn every_guide_page_names_the_features_it_is_built_with() {
    // A page gated on a feature the manifest lacks would never be shown or tested.
    let declared = manifest_features();
    let guide = include_str!("mod.rs");
    for line in guide
        .lines()
        .filter(|line| line.starts_with("page!(") || line.starts_with("    [\""))
    {
        for feature in line
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|f| !f.ends_with(".md"))
        {
            assert!(
                declared.iter().any(|d| d == feature),
                "guide gated on unknown feature {feature:?}"
            );
        }
    }
}

/// The CHANGELOG's promise: the moved client paths still name the new types for one release.
#[test]
#[allow(deprecated)]
fn the_deprecated_client_paths_name_the_moved_types() {
    use crate::client::{CallOptions, FilteredRegistry, ToolFilter};
    let filter: ToolFilter = ToolFilter::builder().deny("mcp__fs__rm").build().unwrap();
    let view: crate::catalog::FilteredRegistry =
        FilteredRegistry::new(crate::Registry::new(), filter);
    assert!(view.catalog().tools().is_empty());
    let _options: crate::client::RequestOptions = CallOptions::new();
}
