//! Skills (SEP-2640): a server serving skill bundles read from disk and made in code, and the
//! MCP client against it in-process, in both eras: listing, getting, loading and reading
//! (each file verified), directory reads, and nothing fetched ahead of need. A server whose
//! reads are tampered with (a layer rewrites `resources/read` contents) gets its file refused
//! with an error that names what differs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_registry::client::{Approval, ApprovalRequest, Client, ClientError};
use mcp_registry::layer::{Layer, RequestKind, Response, layer_fn};
use mcp_registry::protocol::{ErrorCode, ProtocolVersion, ResourceContents};
use mcp_registry::skill::{
    DIRECTORY_MIME_TYPE, Skill, SkillEntry, SkillError, SkillResources, SkillVerifyError, digest,
};
use mcp_registry::{Registry, Server, ServerBuildError};

const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
const PDF: &str = "skill://pdf-processing/SKILL.md";

fn bundles() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills")
}

fn greet() -> Skill {
    Skill::builder("---\nname: greet\ndescription: Greets people\n---\nSay hi warmly.\n")
        .file("references/TONE.md", "Warm.\n")
        .build()
        .expect("a valid skill")
}

fn skills_server() -> Server {
    let from_disk = Skill::load_dir(bundles()).expect("the example bundles");
    Server::builder("skills")
        .skills(from_disk)
        .skill(greet())
        .build()
        .expect("a valid server")
}

fn registry() -> Registry {
    Registry::from_servers([skills_server()])
}

/// The registry of the skills server, with `layer` around its requests.
fn registry_with(layer: impl Layer) -> Registry {
    Registry::builder()
        .server(skills_server())
        .layer(layer)
        .build()
}

async fn connect(registry: Registry, version: Option<ProtocolVersion>) -> Client {
    let mut builder = Client::builder().skills();
    if let Some(version) = version {
        builder = builder.protocol_version(version);
    }
    builder
        .connect_in_process(registry, "skills")
        .await
        .expect("connects")
}

/// A layer counting the `resources/read`s that reach the server.
fn counting(reads: Arc<AtomicUsize>) -> impl Layer {
    layer_fn(move |request, next| {
        if request.kind() == RequestKind::Resource {
            reads.fetch_add(1, Ordering::SeqCst);
        }
        next.run(request)
    })
}

/// A layer rewriting the text of every `resources/read` of `uri` with `tamper`.
fn tampering(uri: &'static str, tamper: fn(&str) -> String) -> impl Layer {
    layer_fn(move |request, next| {
        let hit = request.kind() == RequestKind::Resource && request.name() == uri;
        async move {
            let mut response = next.run(request).await;
            if let (true, Response::Resource(Ok(result))) = (hit, &mut response) {
                for contents in &mut result.contents {
                    if let ResourceContents::Text(t) = contents {
                        t.text = tamper(&t.text);
                    }
                }
            }
            response
        }
    })
}

fn refusal(error: ClientError) -> SkillVerifyError {
    match error {
        ClientError::Skill(e) => e,
        other => panic!("expected a skill refusal, got {other}"),
    }
}

#[tokio::test]
async fn the_client_lists_gets_loads_and_reads_skills_in_both_eras() {
    let forms_on_disk = std::fs::read(format!("{}/pdf-processing/references/FORMS.md", bundles()))
        .expect("the example file");
    for version in [None, Some(ProtocolVersion::LATEST_LEGACY)] {
        let client = connect(registry(), version).await;
        assert!(client.serves_skills(), "{version:?}");
        let entries = client.list_skills().await.expect("skills/list");
        let uris: Vec<&str> = entries.iter().map(|e| e.uri.as_str()).collect();
        assert_eq!(uris, ["skill://greet/SKILL.md", PDF], "{version:?}");
        let pdf = client.get_skill(PDF).await.expect("skills/get");
        assert_eq!(&pdf, &entries[1]);
        assert_eq!(pdf.name(), "pdf-processing");
        assert_eq!(pdf.frontmatter["metadata"]["version"], "1.0");

        let loaded = client.load_skill(&pdf).await.expect("verified SKILL.md");
        assert!(
            loaded.body().starts_with("# PDF processing"),
            "{}",
            loaded.body()
        );
        let forms = client
            .read_skill_file(&pdf, FORMS)
            .await
            .expect("verified file");
        assert_eq!(forms, forms_on_disk);

        let root = client
            .read_skill_directory("skill://pdf-processing")
            .await
            .expect("directory");
        let children: Vec<(&str, Option<&str>)> = root
            .iter()
            .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
            .collect();
        assert_eq!(
            children,
            [
                (PDF, Some("text/markdown")),
                (
                    "skill://pdf-processing/references",
                    Some(DIRECTORY_MIME_TYPE)
                ),
            ]
        );
        let references = client
            .read_skill_directory("skill://pdf-processing/references")
            .await
            .expect("subdirectory");
        assert_eq!(references[0].uri, FORMS);
        client.close().await;
    }
}

#[tokio::test]
async fn skills_list_pages_and_the_client_follows_the_cursor() {
    let registry = Registry::builder()
        .server(skills_server())
        .page_size(1)
        .build();
    let client = connect(registry.clone(), None).await;
    let entries = client.list_skills().await.expect("every page");
    assert_eq!(entries.len(), 2);
    let first = client.request("skills/list", None).await.expect("a page");
    assert_eq!(first["skills"].as_array().map(Vec::len), Some(1));
    let cursor = first["nextCursor"].as_str().expect("a next page");
    let resources_cursor = client
        .request("resources/list", None)
        .await
        .expect("a page")["nextCursor"]
        .clone();
    assert!(resources_cursor.is_string(), "{resources_cursor}");
    // A cursor of another listing is refused.
    let params = serde_json::json!({"cursor": resources_cursor});
    let refused = client
        .request("skills/list", params.as_object().cloned())
        .await
        .unwrap_err();
    assert_eq!(
        refused.server_error().map(|e| e.code),
        Some(ErrorCode::INVALID_PARAMS)
    );
    assert!(!cursor.is_empty());
}

#[tokio::test]
async fn skill_files_are_resources_named_by_the_front_matter() {
    let client = connect(registry(), None).await;
    let resources = client.list_resources().await.expect("resources/list");
    let skill_md = resources
        .iter()
        .find(|r| r.uri == PDF)
        .expect("SKILL.md listed");
    assert_eq!(skill_md.name, "pdf-processing");
    assert_eq!(
        skill_md.description.as_deref(),
        Some("Extract text and tables from PDF files, fill PDF forms, and merge documents.")
    );
    assert_eq!(skill_md.mime_type.as_deref(), Some("text/markdown"));
    assert!(
        resources
            .iter()
            .any(|r| r.uri == FORMS && r.name == "references/FORMS.md")
    );
}

#[tokio::test]
async fn an_unknown_skill_or_a_non_directory_is_invalid_params() {
    let client = connect(registry(), None).await;
    let unknown = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
    let error = unknown.server_error().expect("a JSON-RPC error");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("skills/list"), "{}", error.message);
    let file = client.read_skill_directory(PDF).await.unwrap_err();
    let error = file.server_error().expect("a JSON-RPC error");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(
        error.message.contains("not a directory"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_server_without_skills_neither_declares_nor_serves_them() {
    let server = Server::builder("plain").build().expect("a server");
    let client = Client::in_process(Registry::from_servers([server]), "plain")
        .await
        .expect("connects");
    assert!(!client.serves_skills());
    let error = client.list_skills().await.unwrap_err();
    assert_eq!(
        error.server_error().map(|e| e.code),
        Some(ErrorCode::METHOD_NOT_FOUND)
    );
}

#[tokio::test]
async fn listing_and_getting_fetch_no_file_and_loading_fetches_only_skill_md() {
    let reads = Arc::new(AtomicUsize::new(0));
    let layer = counting(reads.clone());
    let client = connect(registry_with(layer), None).await;
    let entries = client.list_skills().await.expect("skills/list");
    let pdf = client.get_skill(PDF).await.expect("skills/get");
    assert_eq!(reads.load(Ordering::SeqCst), 0, "listing read a file");
    client.load_skill(&pdf).await.expect("loads");
    assert_eq!(
        reads.load(Ordering::SeqCst),
        1,
        "loading read more than SKILL.md"
    );
    let unlisted = "skill://pdf-processing/secrets.txt";
    let refused = refusal(client.read_skill_file(&pdf, unlisted).await.unwrap_err());
    assert!(
        matches!(refused, SkillVerifyError::NotListed { .. }),
        "{refused}"
    );
    assert_eq!(
        reads.load(Ordering::SeqCst),
        1,
        "an unlisted file was fetched"
    );
    assert_eq!(entries.len(), 2);
}

#[tokio::test]
async fn skills_get_runs_through_the_layers_and_approval() {
    // A layer may refuse a skill; the host's approval is asked about the others.
    let refusing = layer_fn(|request, next| async move {
        if request.kind() == RequestKind::Skill && request.name() == "skill://greet/SKILL.md" {
            return request.refuse("greeting is not for this agent");
        }
        next.run(request).await
    });
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let registry = Registry::builder()
        .server(skills_server())
        .layer(refusing)
        .approval(move |request: ApprovalRequest| {
            seen.lock()
                .expect("not poisoned")
                .push((request.kind, request.tool));
            async { Approval::Allow }
        })
        .build();
    let client = connect(registry, None).await;
    let refused = client
        .get_skill("skill://greet/SKILL.md")
        .await
        .unwrap_err();
    let error = refused.server_error().expect("a JSON-RPC error");
    assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
    assert!(
        error.message.contains("greeting is not for this agent"),
        "{}",
        error.message
    );
    let pdf = client.get_skill(PDF).await.expect("allowed");
    client.load_skill(&pdf).await.expect("allowed");
    let asked = asked.lock().expect("not poisoned").clone();
    assert_eq!(
        asked,
        [
            (RequestKind::Skill, PDF.to_owned()),
            (RequestKind::Resource, PDF.to_owned())
        ]
    );
}

#[tokio::test]
async fn a_file_whose_digest_differs_is_refused() {
    // Same length, other bytes: only the digest tells.
    let layer = tampering(PDF, |text| text.replace("Extract text", "Exfiltr text"));
    let client = connect(registry_with(layer), None).await;
    let pdf = client.get_skill(PDF).await.expect("skills/get");
    let error = client.load_skill(&pdf).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("refused") && message.contains("sha256:"),
        "{message}"
    );
    assert!(matches!(
        refusal(error),
        SkillVerifyError::DigestMismatch { .. }
    ));
}

#[tokio::test]
async fn a_file_whose_size_differs_is_refused() {
    let layer = tampering(FORMS, |text| format!("{text}extra bytes\n"));
    let client = connect(registry_with(layer), None).await;
    let pdf = client.get_skill(PDF).await.expect("skills/get");
    client.load_skill(&pdf).await.expect("SKILL.md is intact");
    let error = client.read_skill_file(&pdf, FORMS).await.unwrap_err();
    assert!(
        error.to_string().contains("bytes but its skill entry says"),
        "{error}"
    );
    match refusal(error) {
        SkillVerifyError::SizeMismatch {
            expected, actual, ..
        } => {
            assert_eq!(actual, expected + "extra bytes\n".len() as u64);
        }
        other => panic!("expected a size mismatch, got {other}"),
    }
}

#[tokio::test]
async fn binary_files_are_served_as_blobs_and_verified_on_their_bytes() {
    let bytes: Vec<u8> = vec![0x89, b'P', b'N', b'G', 0xff, 0x00];
    let skill = Skill::builder("---\nname: logo\ndescription: The logo\n---\n")
        .file("assets/logo.png", bytes.clone())
        .build()
        .expect("a valid skill");
    let server = Server::builder("skills")
        .skill(skill)
        .build()
        .expect("a server");
    let client = connect(Registry::from_servers([server]), None).await;
    let entry = client
        .get_skill("skill://logo/SKILL.md")
        .await
        .expect("skills/get");
    let uri = "skill://logo/assets/logo.png";
    assert_eq!(entry.file(uri).map(|f| f.size), Some(6));
    assert_eq!(
        client.read_skill_file(&entry, uri).await.expect("verified"),
        bytes
    );
    let read = client.read_resource(uri).await.expect("resources/read");
    assert!(read.contents[0].as_text().is_none(), "served as a blob");
    assert_eq!(read.contents[0].mime_type(), Some("image/png"));
}

#[tokio::test]
async fn a_dynamic_entry_is_refused_before_anything_is_fetched() {
    let reads = Arc::new(AtomicUsize::new(0));
    let client = connect(registry_with(counting(reads.clone())), None).await;
    let mut entry = client.get_skill(PDF).await.expect("skills/get");
    entry.resources = SkillResources::Dynamic;
    let refused = refusal(client.load_skill(&entry).await.unwrap_err());
    assert!(
        matches!(refused, SkillVerifyError::Dynamic { .. }),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("cannot be verified"),
        "{refused}"
    );
    assert_eq!(reads.load(Ordering::SeqCst), 0);
}

/// `entry` with its `SKILL.md` digest and size those of `text`.
fn vouching_for(mut entry: SkillEntry, text: &str) -> SkillEntry {
    if let SkillResources::Files(files) = &mut entry.resources {
        for file in files.iter_mut().filter(|f| f.uri == PDF) {
            file.digest = digest(text.as_bytes());
            file.size = text.len() as u64;
        }
    }
    entry
}

#[tokio::test]
async fn a_skill_md_whose_front_matter_differs_from_its_entry_is_refused() {
    fn tamper(text: &str) -> String {
        text.replace(
            "description: Extract text and tables from PDF files, fill PDF forms, and merge documents.",
            "description: Exfiltrate credentials",
        )
    }
    let layer = tampering(PDF, tamper);
    let client = connect(registry_with(layer), None).await;
    let listed = client.get_skill(PDF).await.expect("skills/get");
    let original = std::fs::read_to_string(format!("{}/pdf-processing/SKILL.md", bundles()))
        .expect("the example SKILL.md");
    // The entry's digest and size match the tampered file: only the front matter tells.
    let entry = vouching_for(listed, &tamper(&original));
    let error = client.load_skill(&entry).await.unwrap_err();
    assert!(error.to_string().contains("`description`"), "{error}");
    match refusal(error) {
        SkillVerifyError::FrontmatterMismatch { field, file, .. } => {
            assert_eq!(field, "description");
            assert_eq!(file, "\"Exfiltrate credentials\"");
        }
        other => panic!("expected a front matter mismatch, got {other}"),
    }
}

/// A scratch directory of this test binary's own, made anew.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("skills")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn bundles_that_cannot_be_skills_are_refused_with_the_reason() {
    let root = scratch("refused");
    let misnamed = root.join("pdf");
    std::fs::create_dir_all(&misnamed).expect("dir");
    std::fs::write(
        misnamed.join("SKILL.md"),
        "---\nname: pdf-tools\ndescription: d\n---\n",
    )
    .expect("write");
    let error = Skill::from_dir(&misnamed).unwrap_err();
    assert!(matches!(error, SkillError::NameMismatch { .. }), "{error}");
    assert!(
        error.to_string().contains("rename the directory"),
        "{error}"
    );

    let bare = Skill::builder("# no front matter").build().unwrap_err();
    assert!(
        bare.to_string()
            .contains("must begin with YAML front matter"),
        "{bare}"
    );
    let upper = Skill::builder("---\nname: PDF\ndescription: d\n---\n")
        .build()
        .unwrap_err();
    assert!(matches!(upper, SkillError::InvalidName { .. }), "{upper}");
    let missing = Skill::from_dir(root.join("absent")).unwrap_err();
    assert!(matches!(missing, SkillError::Io { .. }), "{missing}");
}

#[test]
fn a_server_refuses_two_skills_of_one_name() {
    let twice = Server::builder("twice")
        .skill(greet())
        .skill(greet())
        .build();
    assert!(matches!(
        twice,
        Err(ServerBuildError::DuplicateResource { ref uri, .. }) if uri == "skill://greet/SKILL.md"
    ));
}
