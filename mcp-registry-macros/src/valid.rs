//! Checks only: every rule a tool function or a `server!` breaks becomes an error at the
//! offending token. Nothing here generates code.

use std::collections::{HashMap, HashSet};

use proc_macro2::Span;
use quote::ToTokens;
use syn::visit::Visit;
use syn::{Pat, ReturnType, Type};

use crate::ast::{ServerInput, ToolFn};
use crate::ctxt::Errors;

/// Finds `impl Trait` inside a type.
struct ImplTraitFinder(Option<Span>);

impl<'ast> Visit<'ast> for ImplTraitFinder {
    fn visit_type_impl_trait(&mut self, t: &'ast syn::TypeImplTrait) {
        self.0.get_or_insert_with(|| syn::spanned::Spanned::span(t));
    }
}

pub(crate) fn impl_trait_in(ty: &Type) -> Option<Span> {
    let mut finder = ImplTraitFinder(None);
    finder.visit_type(ty);
    finder.0
}

/// Checks a tool function: its signature, its parameters, its `# Arguments` docs. (Its name
/// is checked in constant evaluation, by the runtime crate's rule.)
pub(crate) fn check_tool(tool: &ToolFn, errors: &mut Errors) {
    check_signature(tool, errors);
    check_params(tool, errors);
    check_execution(tool, errors);
    check_argument_docs(tool, errors);
}

/// The function itself: free, not generic, safe, not variadic.
fn check_signature(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.item.sig;
    if let Some(receiver) = &tool.receiver {
        errors.spanned(
            receiver,
            "#[mcp_tool] cannot take `self`: a tool is a free function; move it out of the impl block and pass the value it needs as a parameter",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "#[mcp_tool] functions cannot be generic: the schema of every parameter must be known when the tool is defined",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.spanned(
            unsafety,
            "#[mcp_tool] functions cannot be `unsafe`: a client calls them with any arguments",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "#[mcp_tool] functions cannot be variadic");
    }
}

/// How it runs: `blocking` only on a plain `fn`, and a nameable return type for one.
fn check_execution(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.item.sig;
    if let (Some(asyncness), Some((true, _))) = (&sig.asyncness, tool.attrs.blocking) {
        errors.spanned(
            asyncness,
            "`blocking` runs a plain `fn` on the blocking thread pool; remove `async`, or call `mcp_registry::run_blocking` inside the async fn",
        );
    }
    if sig.asyncness.is_none()
        && let ReturnType::Type(_, ty) = &sig.output
        && let Some(span) = impl_trait_in(ty)
    {
        errors.at(
            span,
            "#[mcp_tool] needs a nameable return type; return a concrete type, or make the function `async`",
        );
    }
}

/// The parameters: at most [`MAX_PARAMS`](crate::expand::MAX_PARAMS), plain names, owned
/// types without `impl Trait`, distinct property names.
fn check_params(tool: &ToolFn, errors: &mut Errors) {
    if let Some(extra) = tool.params.get(crate::expand::MAX_PARAMS) {
        errors.spanned(
            &extra.pat,
            format_args!(
                "#[mcp_tool] functions take at most {} parameters; group related ones in a struct deriving `Deserialize` and `JsonSchema`",
                crate::expand::MAX_PARAMS
            ),
        );
    }
    let mut properties: HashSet<String> = HashSet::new();
    for param in &tool.params {
        if let Some(complete) = &param.attrs.complete {
            errors.spanned(
                complete,
                "`complete` is for the arguments of a #[mcp_prompt]: tool arguments are not completed",
            );
        }
        if param.ident.is_none() {
            let hint = match &param.pat {
                Pat::Wild(_) => "give it a name (`_name: Type`)",
                _ => "bind it to a name and destructure it in the body",
            };
            errors.spanned(
                &param.pat,
                format_args!(
                    "a tool parameter must be a plain name, which becomes the argument's name in the tool's input schema; {hint}"
                ),
            );
        }
        if let Type::Reference(r) = &param.ty {
            errors.spanned(
                r,
                "a tool parameter cannot be a reference: arguments are deserialized from JSON into owned values (take `String` instead of `&str`, `Vec<T>` instead of `&[T]`)",
            );
        } else if let Some(span) = impl_trait_in(&param.ty) {
            errors.at(
                span,
                "#[mcp_tool] functions cannot take `impl Trait`: the schema of every parameter must be known when the tool is defined",
            );
        }
        if let Some(property) = param.property() {
            let span = param
                .attrs
                .rename
                .as_ref()
                .map_or_else(|| param.pat.to_token_stream(), ToTokens::to_token_stream);
            if !properties.insert(property.clone()) {
                errors.spanned(
                    span,
                    format_args!("two parameters are named `{property}` in the input schema"),
                );
            }
        }
    }
}

/// The `# Arguments` list: every entry names a parameter, once.
pub(crate) fn check_argument_docs(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.item.sig;
    let mut described: HashMap<&str, Span> = HashMap::new();
    for entry in &tool.docs.arguments {
        let named = tool.params.iter().any(|p| {
            p.ident
                .as_ref()
                .is_some_and(|i| syn::ext::IdentExt::unraw(i) == entry.name)
                || p.property().as_deref() == Some(entry.name.as_str())
        });
        if !named {
            let names: Vec<String> = tool
                .params
                .iter()
                .filter_map(|p| p.ident.as_ref())
                .map(|i| format!("`{i}`"))
                .collect();
            let known = if names.is_empty() {
                "it has no parameters".to_owned()
            } else {
                format!("its parameters are {}", names.join(", "))
            };
            errors.at(
                entry.span,
                format_args!(
                    "the `# Arguments` entry `{}` names no parameter of `{}`; {known}",
                    entry.name, sig.ident
                ),
            );
        } else if described.insert(entry.name.as_str(), entry.span).is_some() {
            errors.at(
                entry.span,
                format_args!("`{}` is described twice in `# Arguments`", entry.name),
            );
        }
    }
}

/// Checks a `server!`.
pub(crate) fn check_server(server: &ServerInput, errors: &mut Errors) {
    // The name's rule is checked in constant evaluation, by the runtime crate's own.
    if server.name.is_none() {
        errors.at(
            Span::call_site(),
            "server! needs a name: `server!(name = \"...\", tools = [...])`",
        );
    }
    for (key, paths) in [
        ("tools", &server.tools),
        ("prompts", &server.prompts),
        ("resources", &server.resources),
    ] {
        let mut seen: Vec<String> = Vec::new();
        for path in paths.iter().flatten() {
            let text = path.to_token_stream().to_string().replace(' ', "");
            if seen.contains(&text) {
                errors.spanned(path, format_args!("`{text}` is listed twice in `{key}`"));
            }
            seen.push(text);
        }
    }
    // With `fn = ident`, items may attach themselves instead (`#[mcp_tool(server = ident)]`).
    if server.tools.is_none()
        && server.prompts.is_none()
        && server.resources.is_none()
        && server.getter.is_none()
    {
        errors.at(
            Span::call_site(),
            "server! needs its tools: `tools = [tool_fn, module::other_tool]` (or its prompts: `prompts = [prompt_fn]`, or its resources: `resources = [resource_fn]`, or `fn = name` for items attached with `server = name`)",
        );
    }
    if let (Some(collect), None) = (&server.collect, &server.getter)
        && !collect.value
    {
        errors.spanned(
            collect,
            "a server that is not collected can only be reached through a function: add `fn = my_server`",
        );
    }
}
