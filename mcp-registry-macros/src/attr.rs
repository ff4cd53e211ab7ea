//! Attribute parsing: `#[mcp_tool(...)]` (and `#[mcp_prompt]`, `#[mcp_resource]`), per-parameter `#[arg(...)]`, and the doc comment
//! (description and the rustdoc `# Arguments` list). Duplicate and unknown attributes are
//! reported here, while parsing; every error is collected, none stops the others.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, LitBool, LitInt, LitStr, Meta, Path, Token};

use crate::ctxt::Errors;
use crate::kind::Kind;

/// An annotation hint: `read_only` (true) or `read_only = false`.
pub(crate) type Hint = bool;

/// What `#[mcp_tool(...)]`, `#[mcp_prompt(...)]` or `#[mcp_resource(...)]` says (each
/// takes a subset of the keys, see [`keys`]).
#[derive(Default)]
pub(crate) struct ItemAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: Option<Hint>,
    pub(crate) destructive: Option<Hint>,
    pub(crate) idempotent: Option<Hint>,
    pub(crate) open_world: Option<Hint>,
    /// Run the (plain, non-`async`) function on the blocking thread pool.
    pub(crate) blocking: Option<(bool, Span)>,
    pub(crate) krate: Option<Path>,
    /// `server = path`: the server (its `server!(fn = ..)` function) the item attaches to.
    pub(crate) server: Option<Path>,
    /// `timeout = "5s"`: the item's own time limit per request.
    pub(crate) timeout: Option<Timeout>,
    /// `task = "optional"` or `"required"` (tools): the `TaskSupport` variant's name.
    pub(crate) task: Option<&'static str>,
    /// `ui = "ui://..."`: the app (MCP Apps) that renders a tool's results.
    pub(crate) ui: Option<LitStr>,
    /// The keys only `#[mcp_resource]` takes.
    pub(crate) resource: ResourceAttrs,
}

/// What `#[mcp_resource(...)]` says beyond the keys a prompt has.
#[derive(Default)]
pub(crate) struct ResourceAttrs {
    pub(crate) uri: Option<LitStr>,
    pub(crate) template: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) size: Option<LitInt>,
}

/// A `timeout = "..."` read at compile time: the limit in milliseconds.
pub(crate) struct Timeout {
    pub(crate) millis: u64,
}

/// Remembers which keys were given, reporting a repeated one at its second occurrence.
#[derive(Default)]
struct Seen(HashSet<String>);

impl Seen {
    fn first(&mut self, key: &str, path: &Path, errors: &mut Errors) -> bool {
        if self.0.insert(key.to_owned()) {
            return true;
        }
        errors.spanned(path, format_args!("duplicate attribute `{key}`"));
        false
    }
}

fn key_of(path: &Path) -> String {
    path.get_ident().map_or_else(
        || quote::quote!(#path).to_string().replace(' ', ""),
        ToString::to_string,
    )
}

fn string_value(meta: &Meta, key: &str, errors: &mut Errors) -> Option<LitStr> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.clone()),
            other => {
                errors.spanned(
                    other,
                    format_args!("`{key}` takes a string literal: `{key} = \"...\"`"),
                );
                None
            }
        },
        _ => {
            errors.spanned(
                meta,
                format_args!("`{key}` takes a string literal: `{key} = \"...\"`"),
            );
            None
        }
    }
}

fn hint_value(meta: &Meta, key: &str, errors: &mut Errors) -> Option<Hint> {
    match meta {
        Meta::Path(_) => Some(true),
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Bool(LitBool { value, .. }),
                ..
            }) => Some(*value),
            other => {
                errors.spanned(
                    other,
                    format_args!("`{key}` is a flag: write `{key}` or `{key} = false`"),
                );
                None
            }
        },
        Meta::List(l) => {
            errors.spanned(
                l,
                format_args!("`{key}` is a flag: write `{key}` or `{key} = false`"),
            );
            None
        }
    }
}

/// `crate = path` or `crate = "path"`.
pub(crate) fn crate_path(value: &Expr, errors: &mut Errors) -> Option<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() => Some(p.path.clone()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => match s.parse::<Path>() {
            Ok(p) => Some(p),
            Err(e) => {
                errors.push(e);
                None
            }
        },
        other => {
            errors.spanned(other, "`crate` takes a path to the mcp-registry crate: `crate = ::my_reexport::mcp_registry`");
            None
        }
    }
}

/// `timeout = "5s"`: a whole number with the unit `ms`, `s`, `m` or `h`, read here so a
/// mistake is a compile error on the literal.
fn timeout_value(meta: &Meta, errors: &mut Errors) -> Option<Timeout> {
    let Meta::NameValue(syn::MetaNameValue {
        value: Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }),
        ..
    }) = meta
    else {
        let value: &dyn quote::ToTokens = match meta {
            Meta::NameValue(nv) => &nv.value,
            _ => meta,
        };
        errors.spanned(
            value,
            "`timeout` takes a duration in a string, the unit after the number: `timeout = \"5s\"` (units: `ms`, `s`, `m`, `h`)",
        );
        return None;
    };
    match parse_duration(&lit.value()) {
        Ok(millis) => Some(Timeout { millis }),
        Err(message) => {
            errors.spanned(lit, message);
            None
        }
    }
}

/// Milliseconds of a duration such as `250ms`, `5s`, `2m` or `1h`, or what is wrong with it.
fn parse_duration(text: &str) -> Result<u64, String> {
    const UNITS: &str = "`ms`, `s`, `m` or `h`";
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = text.split_at(digits);
    if number.is_empty() {
        return Err(format!(
            "`timeout` takes a whole number and a unit ({UNITS}), e.g. `timeout = \"5s\"`; {text:?} does not start with a number"
        ));
    }
    let scale: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "" => {
            return Err(format!(
                "{text:?} has no unit: write {number}ms, {number}s, {number}m or {number}h"
            ));
        }
        _ if unit.starts_with(char::is_whitespace) => {
            return Err(format!(
                "{text:?}: write the unit right after the number, without a space: `{number}{}`",
                unit.trim_start()
            ));
        }
        _ if unit.starts_with('.') => {
            return Err(format!(
                "{text:?}: `timeout` takes a whole number; use a smaller unit (e.g. `1500ms` for 1.5 s)"
            ));
        }
        _ => {
            return Err(format!(
                "unknown unit {unit:?} in {text:?}: `timeout` takes {UNITS}, e.g. `timeout = \"5s\"`"
            ));
        }
    };
    let millis = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("{text:?} is too long a timeout"))?;
    if millis == 0 {
        return Err("a timeout of zero would end every request at once; give a positive duration, or leave `timeout` out for the registry's default".to_owned());
    }
    Ok(millis)
}

/// `server = path`: the path of a server's `server!(fn = ..)` function.
fn server_path(meta: &Meta, errors: &mut Errors) -> Option<Path> {
    match meta {
        Meta::NameValue(syn::MetaNameValue {
            value: Expr::Path(p),
            ..
        }) if p.qself.is_none() => Some(p.path.clone()),
        _ => {
            errors.spanned(
                meta,
                "`server` takes the path of a server's function, as `server!(name = \"math\", fn = math)` defines it: `server = math`",
            );
            None
        }
    }
}

/// The keys each attribute takes, in the order its "unknown attribute" message lists them.
fn keys(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Tool => &[
            "name",
            "title",
            "description",
            "read_only",
            "destructive",
            "idempotent",
            "open_world",
            "blocking",
            "timeout",
            "task",
            "ui",
            "server",
            "crate",
        ],
        Kind::Prompt => &["name", "title", "description", "timeout", "server", "crate"],
        Kind::Resource => &[
            "uri",
            "template",
            "name",
            "title",
            "description",
            "mime_type",
            "size",
            "timeout",
            "server",
            "crate",
        ],
    }
}

/// Parses the tokens inside `#[mcp_tool(...)]`, `#[mcp_prompt(...)]` or
/// `#[mcp_resource(...)]`: each takes the keys [`keys`] lists for it.
pub(crate) fn parse_attrs(kind: Kind, tokens: TokenStream, errors: &mut Errors) -> ItemAttrs {
    let mut attrs = ItemAttrs::default();
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas,
        Err(e) => {
            errors.push(e);
            return attrs;
        }
    };
    let known = keys(kind);
    let mut seen = Seen::default();
    for meta in &metas {
        let key = key_of(meta.path());
        if !known.contains(&key.as_str()) {
            let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            errors.spanned(
                meta.path(),
                format_args!(
                    "unknown attribute `{key}`; {} takes {}",
                    kind.attribute(),
                    list.join(", ")
                ),
            );
            continue;
        }
        if seen.first(&key, meta.path(), errors) {
            attrs.set(meta, &key, errors);
        }
    }
    attrs
}

impl ItemAttrs {
    /// Records one known, first-seen key.
    fn set(&mut self, meta: &Meta, key: &str, errors: &mut Errors) {
        match key {
            "name" => self.name = string_value(meta, key, errors),
            "title" => self.title = string_value(meta, key, errors),
            "description" => self.description = string_value(meta, key, errors),
            "read_only" => self.read_only = hint_value(meta, key, errors),
            "destructive" => self.destructive = hint_value(meta, key, errors),
            "idempotent" => self.idempotent = hint_value(meta, key, errors),
            "open_world" => self.open_world = hint_value(meta, key, errors),
            "blocking" => {
                self.blocking = hint_value(meta, key, errors).map(|b| (b, meta.path().span()));
            }
            "timeout" => self.timeout = timeout_value(meta, errors),
            "task" => self.task = task_value(meta, errors),
            "ui" => self.ui = ui_value(meta, errors),
            "server" => self.server = server_path(meta, errors),
            "uri" => self.resource.uri = string_value(meta, key, errors),
            "template" => self.resource.template = string_value(meta, key, errors),
            "mime_type" => self.resource.mime_type = string_value(meta, key, errors),
            "size" => self.resource.size = size_value(meta, errors),
            _ => match meta {
                Meta::NameValue(nv) => self.krate = crate_path(&nv.value, errors),
                _ => errors.spanned(meta, "`crate` takes a path: `crate = ::mcp_registry`"),
            },
        }
    }
}

/// `task = "optional" | "required" | "forbidden"`: the `TaskSupport` variant it names.
fn task_value(meta: &Meta, errors: &mut Errors) -> Option<&'static str> {
    const HOW: &str = "`task` takes \"optional\" (a task when the client can follow one), \"required\" (only as a task) or \"forbidden\"";
    let Meta::NameValue(nv) = meta else {
        errors.spanned(meta, HOW);
        return None;
    };
    let Expr::Lit(ExprLit {
        lit: Lit::Str(s), ..
    }) = &nv.value
    else {
        errors.spanned(&nv.value, HOW);
        return None;
    };
    match s.value().as_str() {
        "optional" => Some("Optional"),
        "required" => Some("Required"),
        "forbidden" => Some("Forbidden"),
        other => {
            errors.spanned(s, format_args!("unknown task support {other:?}: {HOW}"));
            None
        }
    }
}

/// `ui = "ui://clock/app.html"`: a string that is a `ui://` URI with something after the
/// scheme.
fn ui_value(meta: &Meta, errors: &mut Errors) -> Option<LitStr> {
    let uri = string_value(meta, "ui", errors)?;
    let text = uri.value();
    if text
        .strip_prefix("ui://")
        .is_some_and(|rest| !rest.is_empty())
    {
        return Some(uri);
    }
    errors.spanned(
        &uri,
        format_args!(
            "`ui` names the app's resource by its `ui://` URI, e.g. `ui = \"ui://clock/app.html\"`; got {text:?}"
        ),
    );
    None
}

/// `size = 1024`: a byte count.
fn size_value(meta: &Meta, errors: &mut Errors) -> Option<LitInt> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Int(i), ..
            }) if i.base10_parse::<u64>().is_ok() => Some(i.clone()),
            other => {
                errors.spanned(other, "`size` takes a byte count: `size = 1024`");
                None
            }
        },
        _ => {
            errors.spanned(meta, "`size` takes a byte count: `size = 1024`");
            None
        }
    }
}

/// What a parameter's `#[arg(...)]` says.
#[derive(Default)]
pub(crate) struct ParamAttrs {
    pub(crate) description: Option<LitStr>,
    pub(crate) rename: Option<LitStr>,
    /// `complete = path`: the argument's (or template variable's) completion function.
    pub(crate) complete: Option<syn::Path>,
}

/// Whether `attr` is ours (`#[arg(...)]`); such attributes are removed from the emitted
/// function, since Rust has no meaning for them there.
pub(crate) fn is_param_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("arg")
}

/// Parses every `#[arg(...)]` of one parameter.
pub(crate) fn parse_param_attrs(attrs: &[Attribute], errors: &mut Errors) -> ParamAttrs {
    let mut out = ParamAttrs::default();
    let mut seen = Seen::default();
    for attr in attrs.iter().filter(|a| is_param_attr(a)) {
        let metas = match attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
            Ok(metas) => metas,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        for meta in &metas {
            let key = key_of(meta.path());
            if key != "description" && key != "rename" && key != "complete" {
                errors.spanned(
                    meta.path(),
                    format_args!(
                        "unknown attribute `{key}`; #[arg] takes `description`, `rename` and (on the parameters of a prompt or a resource template) `complete`"
                    ),
                );
                continue;
            }
            if !seen.first(&key, meta.path(), errors) {
                continue;
            }
            if key == "complete" {
                match meta {
                    Meta::NameValue(syn::MetaNameValue {
                        value: Expr::Path(p),
                        ..
                    }) => out.complete = Some(p.path.clone()),
                    other => errors.spanned(
                        other,
                        "`complete` takes the path of a completion function: `complete = my_completer`",
                    ),
                }
                continue;
            }
            let value = string_value(meta, &key, errors);
            if key == "description" {
                out.description = value;
            } else {
                out.rename = value;
            }
        }
    }
    out
}

/// One line of the doc comment, with the span of the attribute it came from.
struct DocLine {
    text: String,
    span: Span,
}

/// One entry of the `# Arguments` list: `` * `name` - text ``.
pub(crate) struct ArgumentDoc {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) span: Span,
}

/// What the doc comment says.
#[derive(Default)]
pub(crate) struct Docs {
    /// The text before the first heading.
    pub(crate) description: Option<String>,
    /// The `# Arguments` (or `# Parameters`) entries.
    pub(crate) arguments: Vec<ArgumentDoc>,
}

fn doc_lines(attrs: &[Attribute]) -> Vec<DocLine> {
    let mut lines = Vec::new();
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        // `#[doc = include_str!(..)]` and the like cannot be read here; they are skipped.
        let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            continue;
        };
        for text in s.value().split('\n') {
            lines.push(DocLine {
                text: text.trim_end().to_owned(),
                span: attr.span(),
            });
        }
    }
    // Remove the indentation common to every non-blank line, as rustdoc does.
    let indent = lines
        .iter()
        .filter(|l| !l.text.trim().is_empty())
        .map(|l| l.text.len() - l.text.trim_start().len())
        .min()
        .unwrap_or(0);
    for line in &mut lines {
        line.text = line.text.get(indent..).unwrap_or_default().to_owned();
    }
    lines
}

/// The heading's text if `line` is a Markdown ATX heading (`# Arguments`, `## Errors`).
fn heading(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let rest = trimmed.trim_start_matches('#');
    let level = trimmed.len() - rest.len();
    if (1..=6).contains(&level) && (rest.is_empty() || rest.starts_with(' ')) {
        Some(rest.trim())
    } else {
        None
    }
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Parses one `# Arguments` list item (the text after the bullet).
fn argument_entry(item: &str) -> Option<(String, String)> {
    let rest = item.trim_start().strip_prefix('`')?;
    let (name, rest) = rest.split_once('`')?;
    let rest = rest.trim_start();
    let text = ["-", ":", "\u{2014}", "\u{2013}"]
        .iter()
        .find_map(|sep| rest.strip_prefix(sep))
        .unwrap_or(rest);
    Some((name.trim().to_owned(), text.trim().to_owned()))
}

/// Reads the description and the `# Arguments` list out of the doc comment.
pub(crate) fn parse_docs(attrs: &[Attribute], errors: &mut Errors) -> Docs {
    let lines = doc_lines(attrs);
    let mut docs = Docs::default();
    let mut description = Vec::new();
    let mut in_fence = false;
    let mut seen_heading = false;
    let mut in_arguments = false;
    let mut current: Option<ArgumentDoc> = None;
    for line in &lines {
        if is_fence(&line.text) {
            in_fence = !in_fence;
        }
        let head = if in_fence { None } else { heading(&line.text) };
        if let Some(title) = head {
            seen_heading = true;
            docs.arguments.extend(current.take());
            in_arguments =
                title.eq_ignore_ascii_case("arguments") || title.eq_ignore_ascii_case("parameters");
            continue;
        }
        if !seen_heading {
            description.push(line.text.as_str());
            continue;
        }
        if !in_arguments || in_fence {
            continue;
        }
        let trimmed = line.text.trim();
        let bullet = ["* ", "- ", "+ "]
            .iter()
            .find_map(|b| trimmed.strip_prefix(b));
        match bullet {
            Some(item) => {
                docs.arguments.extend(current.take());
                match argument_entry(item) {
                    Some((name, text)) => {
                        current = Some(ArgumentDoc {
                            name,
                            text,
                            span: line.span,
                        })
                    }
                    None => errors.at(
                        line.span,
                        "cannot read this `# Arguments` entry; write it as: * `name` - what the argument is",
                    ),
                }
            }
            None if trimmed.is_empty() => docs.arguments.extend(current.take()),
            None => {
                if let Some(entry) = &mut current {
                    if !entry.text.is_empty() {
                        entry.text.push(' ');
                    }
                    entry.text.push_str(trimmed);
                }
            }
        }
    }
    docs.arguments.extend(current.take());
    let text = description.join("\n");
    let text = text.trim();
    if !text.is_empty() {
        docs.description = Some(text.to_owned());
    }
    docs
}
