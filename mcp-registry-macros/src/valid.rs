//! Checks only: every rule an annotated function or a `server!` breaks becomes an error at
//! the offending token. Nothing here generates code.

use std::collections::{HashMap, HashSet};

use proc_macro2::Span;
use quote::ToTokens;
use syn::visit::Visit;
use syn::{Pat, ReturnType, Type};

use crate::ast::{AnnotatedFn, Param, ServerInput};
use crate::ctxt::Errors;
use crate::expand::MAX_PARAMS;
use crate::kind::Kind;
use crate::uri;

/// Finds `impl Trait` inside a type.
struct ImplTraitFinder(Option<Span>);

impl<'ast> Visit<'ast> for ImplTraitFinder {
    fn visit_type_impl_trait(&mut self, t: &'ast syn::TypeImplTrait) {
        self.0.get_or_insert_with(|| syn::spanned::Spanned::span(t));
    }
}

fn impl_trait_in(ty: &Type) -> Option<Span> {
    let mut finder = ImplTraitFinder(None);
    finder.visit_type(ty);
    finder.0
}

/// Checks an annotated function: its signature, its parameters, how it runs, its
/// `# Arguments` docs; a resource also its `uri` or `template`. (Its name is checked in
/// constant evaluation by the runtime crate's rule, its parameter types through their
/// traits.)
pub(crate) fn check(def: &AnnotatedFn, errors: &mut Errors) {
    check_signature(def, errors);
    match def.kind {
        Kind::Tool => {
            check_tool_params(def, errors);
            check_blocking(def, errors);
            check_argument_docs(def, errors);
        }
        Kind::Prompt => {
            check_prompt_params(def, errors);
            check_argument_docs(def, errors);
        }
        Kind::Resource => {
            check_resource_params(def, errors);
            check_resource_source(def, errors);
        }
    }
}

/// Why each signature rule holds, per kind (after the attribute's name in the message).
struct Reasons {
    receiver: &'static str,
    generic: &'static str,
    unsafety: &'static str,
    too_many: &'static str,
}

fn reasons(kind: Kind) -> Reasons {
    match kind {
        Kind::Tool => Reasons {
            receiver: "a tool is a free function; move it out of the impl block and pass the value it needs as a parameter, or make the impl `#[mcp_server]` and mark the method `#[tool]`",
            generic: ": the schema of every parameter must be known when the tool is defined",
            unsafety: ": a client calls them with any arguments",
            too_many: "; group related ones in a struct deriving `Deserialize` and `JsonSchema`",
        },
        Kind::Prompt => Reasons {
            receiver: "a prompt is a free function; move it out of the impl block, or make the impl `#[mcp_server]` and mark the method `#[prompt]`",
            generic: ": their arguments must be known when the prompt is defined",
            unsafety: ": a client calls them with any arguments",
            too_many: "",
        },
        Kind::Resource => Reasons {
            receiver: "a resource is a free function; move it out of the impl block, or make the impl `#[mcp_server]` and mark the method `#[resource(uri = \"..\")]`",
            generic: "",
            unsafety: "",
            too_many: "",
        },
    }
}

/// The function itself: free, not generic, safe, not variadic, a nameable return type unless
/// `async`, at most [`MAX_PARAMS`] parameters.
fn check_signature(def: &AnnotatedFn, errors: &mut Errors) {
    let sig = &def.item.sig;
    let attribute = def.kind.attribute();
    let reasons = reasons(def.kind);
    if let Some(receiver) = &def.receiver {
        errors.spanned(
            receiver,
            format_args!("{attribute} cannot take `self`: {}", reasons.receiver),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            format_args!("{attribute} functions cannot be generic{}", reasons.generic),
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.spanned(
            unsafety,
            format_args!(
                "{attribute} functions cannot be `unsafe`{}",
                reasons.unsafety
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(
            variadic,
            format_args!("{attribute} functions cannot be variadic"),
        );
    }
    if sig.asyncness.is_none()
        && let ReturnType::Type(_, ty) = &sig.output
        && let Some(span) = impl_trait_in(ty)
    {
        errors.at(
            span,
            format_args!("{attribute} needs a nameable return type; return a concrete type, or make the function `async`"),
        );
    }
    if let Some(extra) = def.params.get(MAX_PARAMS) {
        errors.spanned(
            &extra.pat,
            format_args!(
                "{attribute} functions take at most {MAX_PARAMS} parameters{}",
                reasons.too_many
            ),
        );
    }
}

/// `blocking` only on a plain `fn`.
fn check_blocking(tool: &AnnotatedFn, errors: &mut Errors) {
    if let (Some(asyncness), Some((true, _))) = (&tool.item.sig.asyncness, tool.attrs.blocking) {
        errors.spanned(
            asyncness,
            "`blocking` runs a plain `fn` on the blocking thread pool; remove `async`, or call `mcp_registry::run_blocking` inside the async fn",
        );
    }
}

/// A tool's parameters: plain names, owned types without `impl Trait`, distinct property
/// names, no `complete`.
fn check_tool_params(tool: &AnnotatedFn, errors: &mut Errors) {
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
        if let Some(property) = param.property()
            && !properties.insert(property.clone())
        {
            errors.spanned(
                renamed_span(param),
                format_args!("two parameters are named `{property}` in the input schema"),
            );
        }
    }
}

/// Where a parameter's name is written: its `rename`, else its binding.
fn renamed_span(param: &Param) -> proc_macro2::TokenStream {
    param
        .attrs
        .rename
        .as_ref()
        .map_or_else(|| param.pat.to_token_stream(), ToTokens::to_token_stream)
}

/// A prompt's parameters: plain names, not references, distinct argument names.
fn check_prompt_params(prompt: &AnnotatedFn, errors: &mut Errors) {
    let mut names = HashSet::new();
    for param in &prompt.params {
        if param.ident.is_none() {
            let hint = match &param.pat {
                Pat::Wild(_) => "give it a name (`_name: String`)",
                _ => "bind it to a name",
            };
            errors.spanned(
                &param.pat,
                format_args!(
                    "a prompt parameter must be a plain name, which becomes the argument's name; {hint}"
                ),
            );
        }
        if let Type::Reference(r) = &param.ty {
            errors.spanned(
                r,
                "a prompt parameter cannot be a reference: take `String` (required) or `Option<String>` (optional)",
            );
        }
        if let Some(name) = param.property()
            && !names.insert(name.clone())
        {
            errors.spanned(
                renamed_span(param),
                format_args!("two arguments are named `{name}`"),
            );
        }
    }
}

/// A resource's parameters: plain names (the template variables they take), not references.
/// (A parameter named like no variable is refused in constant evaluation unless its type is
/// the context: `expand::resource::not_variables`.)
fn check_resource_params(resource: &AnnotatedFn, errors: &mut Errors) {
    for param in &resource.params {
        if param.ident.is_none() {
            errors.spanned(
                &param.pat,
                "a resource parameter must be a plain name, the template variable it takes",
            );
        }
        if let Type::Reference(r) = &param.ty {
            errors.spanned(
                r,
                "a resource parameter cannot be a reference: take `String` or another `FromStr` type",
            );
        }
    }
}

/// `uri` or `template`, not both: a fixed URI with a scheme, or a template whose every
/// variable has a parameter.
fn check_resource_source(resource: &AnnotatedFn, errors: &mut Errors) {
    let own = &resource.attrs.resource;
    match (&own.uri, &own.template) {
        (Some(_), Some(template)) => errors.spanned(
            template,
            "give `uri` (one resource) or `template` (a family of resources), not both",
        ),
        (None, None) => errors.at(
            Span::call_site(),
            "#[mcp_resource] needs `uri = \"scheme://...\"` (one resource) or `template = \"scheme://{var}\"` (a family)",
        ),
        (Some(uri), None) => {
            if !uri::has_scheme(&uri.value()) {
                errors.spanned(
                    uri,
                    "a resource URI must be an absolute URI: `scheme:...`, e.g. `file:///notes.txt`",
                );
            }
        }
        (None, Some(template)) => match uri::template_variables(&template.value()) {
            Err(message) => errors.spanned(template, message),
            Ok(variables) => {
                let names: Vec<String> = resource
                    .params
                    .iter()
                    .filter_map(|p| p.property())
                    .collect();
                for variable in variables.iter().filter(|v| !names.contains(v)) {
                    errors.spanned(
                        template,
                        format_args!(
                            "template variable `{variable}` has no parameter: add `{variable}: String` (or another `FromStr` type) to the function"
                        ),
                    );
                }
            }
        },
    }
}

/// The `# Arguments` list: every entry names a parameter, once.
fn check_argument_docs(tool: &AnnotatedFn, errors: &mut Errors) {
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
