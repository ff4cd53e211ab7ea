//! `#[mcp_resource]`: its attributes (`uri` or `template`, metadata), the same reading of a
//! function as `#[mcp_tool]` (`ast::ToolFn`), then its own checks (template variables
//! against parameters), generation and fallback, kept apart.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitInt, LitStr, Meta, Path, ReturnType, Token, Type};

use crate::ast::ToolFn;
use crate::attr::{Seen, ToolAttrs, crate_path, key_of, string_value};
use crate::ctxt::Errors;
use crate::expand::{MAX_PARAMS, cfgs, hidden, option_str, static_lifetimes};

// ---------------------------------------------------------------------------------------------
// Attributes.

/// What `#[mcp_resource(...)]` says beyond the keys a prompt has.
#[derive(Default)]
pub(crate) struct ResourceAttrs {
    pub(crate) uri: Option<LitStr>,
    pub(crate) template: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) size: Option<LitInt>,
}

const RESOURCE_KEYS: &str = "`uri`, `template`, `name`, `title`, `description`, `mime_type`, `size`, `timeout`, `server`, `crate`";

/// Parses the tokens inside `#[mcp_resource(...)]`: the shared keys into the tools' attribute
/// struct, the resource's own into [`ResourceAttrs`].
pub(crate) fn parse_attrs(tokens: TokenStream, errors: &mut Errors) -> (ToolAttrs, ResourceAttrs) {
    let mut attrs = ToolAttrs::default();
    let mut own = ResourceAttrs::default();
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas,
        Err(e) => {
            errors.push(e);
            return (attrs, own);
        }
    };
    let mut seen = Seen::default();
    for meta in &metas {
        let key = key_of(meta.path());
        let known = matches!(
            key.as_str(),
            "uri"
                | "template"
                | "name"
                | "title"
                | "description"
                | "mime_type"
                | "size"
                | "timeout"
                | "server"
                | "crate"
        );
        if !known {
            errors.spanned(
                meta.path(),
                format_args!("unknown attribute `{key}`; #[mcp_resource] takes {RESOURCE_KEYS}"),
            );
            continue;
        }
        if !seen.first(&key, meta.path(), errors) {
            continue;
        }
        match key.as_str() {
            "uri" => own.uri = string_value(meta, &key, errors),
            "template" => own.template = string_value(meta, &key, errors),
            "name" => attrs.name = string_value(meta, &key, errors),
            "title" => attrs.title = string_value(meta, &key, errors),
            "description" => attrs.description = string_value(meta, &key, errors),
            "server" => attrs.server = crate::attr::server_path(meta, errors),
            "timeout" => attrs.timeout = crate::attr::timeout_value(meta, errors),
            "mime_type" => own.mime_type = string_value(meta, &key, errors),
            "size" => match meta {
                Meta::NameValue(nv) => match &nv.value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Int(i), ..
                    }) if i.base10_parse::<u64>().is_ok() => own.size = Some(i.clone()),
                    other => errors.spanned(other, "`size` takes a byte count: `size = 1024`"),
                },
                _ => errors.spanned(meta, "`size` takes a byte count: `size = 1024`"),
            },
            _ => match meta {
                Meta::NameValue(nv) => attrs.krate = crate_path(&nv.value, errors),
                _ => errors.spanned(meta, "`crate` takes a path: `crate = ::mcp_registry`"),
            },
        }
    }
    (attrs, own)
}

// ---------------------------------------------------------------------------------------------
// Checks.

/// The variables of a URI template, for the compile-time check against the parameters
/// (the runtime crate parses and matches templates with a URI template crate); an error for
/// an unclosed brace or an expression above level 2.
fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut variables = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(format!("unclosed `{{` in URI template {template:?}"));
        };
        let expression = &after[..close];
        let name = expression.strip_prefix(['+', '#']).unwrap_or(expression);
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'));
        if !plain {
            return Err(format!(
                "`{{{expression}}}` is not supported: URI templates are read at level 2 (`{{var}}`, `{{+var}}`, `{{#var}}`), one variable per expression"
            ));
        }
        if variables.iter().any(|v| v == name) {
            return Err(format!("template variable `{name}` appears twice"));
        }
        variables.push(name.to_owned());
        rest = &after[close + 1..];
    }
    Ok(variables)
}

/// Whether `uri` starts with a URI scheme and `:`.
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Checks a resource function: free, not generic, safe, a nameable return type; `uri` or
/// `template` (not both); a fixed `uri` takes no parameters, a template's parameters are
/// exactly its variables, by name. (Parameter types are checked through `ResourceParam`.)
pub(crate) fn check(resource: &ToolFn, own: &ResourceAttrs, errors: &mut Errors) {
    let sig = &resource.item.sig;
    if let Some(receiver) = &resource.receiver {
        errors.spanned(
            receiver,
            "#[mcp_resource] cannot take `self`: a resource is a free function; move it out of the impl block",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(&sig.generics, "#[mcp_resource] functions cannot be generic");
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.spanned(unsafety, "#[mcp_resource] functions cannot be `unsafe`");
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "#[mcp_resource] functions cannot be variadic");
    }
    if sig.asyncness.is_none()
        && let ReturnType::Type(_, ty) = &sig.output
        && let Some(span) = crate::valid::impl_trait_in(ty)
    {
        errors.at(
            span,
            "#[mcp_resource] needs a nameable return type; return a concrete type, or make the function `async`",
        );
    }
    if let Some(extra) = resource.params.get(MAX_PARAMS) {
        errors.spanned(
            &extra.pat,
            format_args!("#[mcp_resource] functions take at most {MAX_PARAMS} parameters"),
        );
    }
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
            if !has_scheme(&uri.value()) {
                errors.spanned(
                    uri,
                    "a resource URI must be an absolute URI: `scheme:...`, e.g. `file:///notes.txt`",
                );
            }
            // A parameter is refused unless its type is the context: checked in constant
            // evaluation, through `ResourceParam::VARIABLE` (see `not_variables`).
        }
        (None, Some(template)) => match template_variables(&template.value()) {
            Err(message) => errors.spanned(template, message),
            Ok(variables) => {
                // A parameter named like no variable is refused unless its type is the
                // context: checked in constant evaluation (see `not_variables`).
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

/// The constant checks of the parameters named like no template variable (every parameter
/// of a fixed `uri`): each is refused unless its type is filled by the request (the
/// context), as its `ResourceParam::VARIABLE` says; the error is on the parameter.
fn not_variables(resource: &ToolFn, own: &ResourceAttrs, krate: &Path) -> TokenStream {
    let variables = match &own.template {
        Some(template) => match template_variables(&template.value()) {
            Ok(variables) => variables,
            // The template itself is refused: nothing to check the parameters against.
            Err(_) => return TokenStream::new(),
        },
        None => Vec::new(),
    };
    resource
        .params
        .iter()
        .filter_map(|param| {
            let name = param.property()?;
            if variables.contains(&name) {
                return None;
            }
            let message = match &own.template {
                Some(template) => format!(
                    "`{name}` is not a variable of the template {:?} (its variables: {})",
                    template.value(),
                    list(&variables)
                ),
                None => "a resource with a fixed `uri` takes no parameters but the request's `ToolContext`; for variables write `template = \"scheme://{var}\"`".to_owned(),
            };
            let ty = static_lifetimes(&param.ty);
            let span = param.pat.span();
            Some(quote_spanned! {span=>
                const _: () = if <<#ty as #krate::resource::param::ResourceParamType>::Checked as #krate::resource::param::ResourceParam>::VARIABLE {
                    ::core::panic!("{}", #message)
                };
            })
        })
        .collect()
}

fn list(variables: &[String]) -> String {
    if variables.is_empty() {
        return "none".to_owned();
    }
    variables
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// Generation.

/// The items standing for the resource: the struct, `profile::resource()` (or
/// `resource_template()`), and the `ResourceItem` impl whose build has the given body.
fn items(resource: &ToolFn, own: &ResourceAttrs, krate: &Path, body: TokenStream) -> TokenStream {
    let ident = &resource.item.sig.ident;
    let vis = &resource.item.vis;
    let cfgs = cfgs(resource);
    let (key, getter, ty, add) = match (&own.uri, &own.template) {
        (Some(uri), _) => (
            uri.value(),
            quote!(resource),
            quote!(#krate::Resource),
            quote!(resource),
        ),
        (None, template) => (
            template.as_ref().map(LitStr::value).unwrap_or_default(),
            quote!(resource_template),
            quote!(#krate::ResourceTemplate),
            quote!(resource_template),
        ),
    };
    let doc = format!(
        "The MCP {} made from this function (built on first use, then shared).",
        if own.uri.is_some() {
            "resource"
        } else {
            "resource template"
        }
    );
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #(#cfgs)*
        impl #ident {
            #[doc = #doc]
            #[allow(dead_code)]
            pub fn #getter() -> #ty {
                #body
            }
        }

        #(#cfgs)*
        impl #krate::__private::ResourceItem for #ident {
            const KEY: &'static str = #key;

            fn add_to(builder: #krate::ServerBuilder) -> #krate::ServerBuilder {
                builder.#add(Self::#getter())
            }
        }
    }
}

/// `#[mcp_resource]`: the function, unchanged, and the resource next to it.
pub(crate) fn expand(resource: &ToolFn, own: &ResourceAttrs) -> TokenStream {
    let krate = resource.krate();
    let start = hidden("__mcp_start");
    let request = hidden("__mcp_request");
    let values: Vec<Ident> = (0..resource.params.len())
        .map(|i| hidden(&format!("__mcp_arg{i}")))
        .collect();
    let reads = resource.params.iter().zip(&values).map(|(p, value)| {
        let ty = static_lifetimes(&p.ty);
        let checked = quote_spanned! {p.ty.span()=>
            <#ty as #krate::resource::param::ResourceParamType>::Checked
        };
        let name = p.property().unwrap_or_default();
        quote! {
            let #value = match #krate::__private::resource_var::<#checked>(&#request, #name) {
                ::core::result::Result::Ok(value) => value,
                ::core::result::Result::Err(error) => return #krate::__private::resource_failed(error),
            };
        }
    });
    let (name, _) = resource.tool_name();
    let attr = |lit: &Option<LitStr>| option_str(lit.as_ref().map(LitStr::value).as_deref());
    let title = attr(&resource.attrs.title);
    let description = resource
        .attrs
        .description
        .as_ref()
        .map(LitStr::value)
        .or_else(|| resource.docs.description.clone());
    let description = option_str(description.as_deref());
    let mime_type = attr(&own.mime_type);
    let timeout = crate::expand::option_timeout(resource.attrs.timeout.as_ref());
    let size = match &own.size {
        Some(size) => quote!(::core::option::Option::Some(#size)),
        None => quote!(::core::option::Option::None),
    };
    let key = own
        .uri
        .as_ref()
        .or(own.template.as_ref())
        .map(LitStr::value)
        .unwrap_or_default();
    let ident = &resource.item.sig.ident;
    let output = resource.output();
    let convert = quote_spanned! {output.span()=>
        <#output as #krate::IntoResourceContents>::into_read_result
    };
    let read = if resource.item.sig.asyncness.is_some() {
        quote_spanned! {ident.span()=>
            ::std::boxed::Box::pin(#krate::__private::resource_async(#ident(#(#values),*), #request, #convert))
        }
    } else {
        quote_spanned!(ident.span()=> #krate::__private::resource_sync(#ident(#(#values),*), #request, #convert))
    };
    let (cached, completers) = if own.uri.is_some() {
        (quote!(cached_resource), TokenStream::new())
    } else {
        let builder = hidden("__mcp_builder");
        let completers = resource.params.iter().filter_map(|p| {
            let path = p.attrs.complete.as_ref()?;
            let name = p.property()?;
            Some(quote_spanned!(path.span()=> .complete(#name, #path)))
        });
        (
            quote!(cached_resource_template),
            quote!(, |#builder: #krate::ResourceTemplateBuilder| #builder #(#completers)*),
        )
    };
    let body = quote! {
        fn #start(#request: #krate::resource::ResourceRequest) -> #krate::resource::ResourceFuture {
            #(#reads)*
            #read
        }
        #krate::__private::#cached(
            ::core::any::TypeId::of::<Self>(),
            &#krate::__private::ResourceMeta {
                key: #key,
                name: #name,
                title: #title,
                description: #description,
                mime_type: #mime_type,
                size: #size,
                timeout: #timeout,
            },
            #start
            #completers
        )
    };
    let mut items = items(resource, own, &krate, body);
    items.extend(crate::expand::attachment(resource, &krate, "resource"));
    let checks = not_variables(resource, own, &krate);
    let cfgs = cfgs(resource);
    items.extend(quote! {
        #(#cfgs)*
        const _: () = { #checks };
    });
    let item = &resource.item;
    match &resource.original {
        Some(original) => quote!(#original #items),
        None => quote!(#item #items),
    }
}

// ---------------------------------------------------------------------------------------------
// Fallback.

/// `#[mcp_resource]` on a function with mistakes: the function, the errors, and stand-ins for
/// the generated items.
pub(crate) fn fallback(resource: &ToolFn, own: &ResourceAttrs, errors: &Errors) -> TokenStream {
    let item = &resource.item;
    let errors = errors.to_compile_errors();
    if resource.receiver.is_some() {
        return quote!(#errors #item);
    }
    let krate = resource.krate();
    let stubs = items(
        resource,
        own,
        &krate,
        quote!(::core::unreachable!("this resource failed to compile")),
    );
    // The parameters' checks too (they depend on types only rustc knows): every mistake in
    // one compile.
    let checks =
        (own.uri.is_some() != own.template.is_some()).then(|| not_variables(resource, own, &krate));
    quote! {
        #errors
        #item
        #stubs
        const _: () = { #checks };
    }
}
