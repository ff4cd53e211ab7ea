//! `#[mcp_server] impl Notes { #[tool] async fn add(&self, ..) }`: tools, prompts and
//! resources as methods on a struct, the struct being their host state.
//!
//! Each annotated method becomes a free function the way the user would write one for
//! `#[mcp_tool]` (`#[mcp_prompt]`, `#[mcp_resource]`): the same parameters and docs, `&self`
//! replaced by a `State<Notes>` parameter (no argument: host state), its body the method's
//! call. That function then goes through the very phases the attributes use (`ast`, `valid`,
//! `expand` or `fallback`), so methods get the same schemas, checks and messages. The
//! struct's `server()` builds the server `server!` would, with the struct attached to it
//! (`ServerBuilder::shared_extension`), where every `State<Notes>` finds it.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{FnArg, ImplItem, ImplItemFn, Pat, Path, Type};

use crate::ast::{AnnotatedFn, ServerInput};
use crate::ctxt::Errors;
use crate::kind::Kind;

/// `#[mcp_server(..)]` on `impl Type { .. }`.
pub(crate) fn mcp_server(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut item: syn::ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(e) => {
            let message = "#[mcp_server] goes on an impl block: `impl MyServer { #[tool] async fn name(&self, ..) -> .. }`";
            let mut out = syn::Error::new(e.span(), message).to_compile_error();
            out.extend(input);
            return out;
        }
    };
    let mut server = match syn::parse2::<ServerInput>(args) {
        Ok(server) => server,
        Err(e) => {
            return quote!(#item)
                .into_iter()
                .chain(e.to_compile_error())
                .collect();
        }
    };
    let mut errors = std::mem::take(&mut server.errors);
    check_server_keys(&server, &mut errors);
    let Some(self_ident) = self_ident(&item, &mut errors) else {
        return quote!(#item)
            .into_iter()
            .chain(errors.to_compile_errors())
            .collect();
    };
    if server.name.is_none() {
        let name = snake_case(&self_ident.to_string());
        server.name = Some(syn::LitStr::new(&name, self_ident.span()));
    }
    let self_ty = (*item.self_ty).clone();
    let mut methods = Vec::new();
    let mut marked = false;
    for member in &mut item.items {
        if let ImplItem::Fn(method) = member
            && let Some(found) = Method::take(method, &mut errors)
        {
            marked = true;
            // A method with the wrong receiver or not `async` is reported once, here: no
            // function stands for it, which would only add rustc's errors to ours.
            if check_method(found.kind, &found.sig, &mut errors) {
                methods.push(found);
            }
        }
    }
    check_unique_names(&methods, &mut errors);
    if !marked {
        errors.at(
            Span::call_site(),
            "#[mcp_server] needs at least one method marked `#[tool]`, `#[prompt]` or `#[resource(uri = \"..\")]`",
        );
    }
    let mut generated = TokenStream::new();
    let (mut tools, mut prompts, mut resources) = (Vec::new(), Vec::new(), Vec::new());
    for method in &methods {
        let krate = server.krate();
        let (path, tokens) = method.expand(&self_ident, &self_ty, &krate, &server);
        generated.extend(tokens);
        match method.kind {
            Kind::Tool => tools.push(path),
            Kind::Prompt => prompts.push(path),
            Kind::Resource => resources.push(path),
        }
    }
    if !errors.is_empty() {
        // Stand-ins, so code calling `into_server()` adds no errors of its own.
        let errors = errors.to_compile_errors();
        let stubs = server_fns(&server, &self_ty, None);
        return quote!(#item #generated #errors #stubs);
    }
    server.tools = (!tools.is_empty()).then_some(tools);
    server.prompts = (!prompts.is_empty()).then_some(prompts);
    server.resources = (!resources.is_empty()).then_some(resources);
    let server_fns = server_fns(&server, &self_ty, Some(()));
    quote!(#item #generated #server_fns)
}

/// The keys `server!` takes that `#[mcp_server]` does not: its items are its methods.
fn check_server_keys(server: &ServerInput, errors: &mut Errors) {
    for (given, key) in [
        (server.tools.is_some(), "tools"),
        (server.prompts.is_some(), "prompts"),
        (server.resources.is_some(), "resources"),
        (server.getter.is_some(), "fn"),
        (server.collect.is_some(), "collect"),
    ] {
        if given {
            errors.at(
                Span::call_site(),
                format_args!(
                    "#[mcp_server] takes no `{key}`: its items are the impl's methods marked `#[tool]`, `#[prompt]` or `#[resource]`, and its server is `value.into_server()`; it takes `name`, `version`, `title`, `instructions`, `crate`"
                ),
            );
        }
    }
}

/// The struct's name: the impl must be an inherent impl of a plain, non-generic type.
fn self_ident(item: &syn::ItemImpl, errors: &mut Errors) -> Option<syn::Ident> {
    if let Some((_, path, _)) = &item.trait_ {
        errors.spanned(
            path,
            "#[mcp_server] goes on the struct's own impl block (`impl Notes { .. }`), not on a trait impl",
        );
        return None;
    }
    if !item.generics.params.is_empty() {
        errors.spanned(
            &item.generics,
            "#[mcp_server] cannot be generic: every tool's schema must be known when the server is defined",
        );
        return None;
    }
    match &*item.self_ty {
        Type::Path(p) if p.qself.is_none() => match p.path.segments.last() {
            Some(last) if last.arguments.is_empty() => Some(last.ident.clone()),
            _ => {
                errors.spanned(&item.self_ty, "#[mcp_server] needs a type without generics");
                None
            }
        },
        other => {
            errors.spanned(
                other,
                "#[mcp_server] goes on the impl block of a struct or enum",
            );
            None
        }
    }
}

/// `NoteStore` as a server name: `note_store`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A method marked `#[tool]`, `#[prompt]` or `#[resource]`, taken out of the impl.
struct Method {
    kind: Kind,
    /// The marker's arguments (`read_only`, `uri = ".."`, ..).
    args: TokenStream,
    /// The method as written, our attributes included (the impl keeps it without them).
    sig: syn::Signature,
    attrs: Vec<syn::Attribute>,
    /// The parameters after `self`, with their `#[arg]` attributes.
    params: Vec<syn::PatType>,
}

impl Method {
    /// The marked method's description, its marker and `#[arg]`s removed from `method`;
    /// `None` when it is not marked. Receiver and `async` mistakes are reported here.
    fn take(method: &mut ImplItemFn, errors: &mut Errors) -> Option<Method> {
        let mut found: Option<(Kind, TokenStream)> = None;
        let mut kept = Vec::new();
        for attr in std::mem::take(&mut method.attrs) {
            let Some(kind) = marker(&attr) else {
                kept.push(attr);
                continue;
            };
            if found.is_some() {
                errors.spanned(
                    &attr,
                    "a method is one item: mark it `#[tool]`, `#[prompt]` or `#[resource]`, once",
                );
                continue;
            }
            let args = match &attr.meta {
                syn::Meta::List(list) => list.tokens.clone(),
                _ => TokenStream::new(),
            };
            found = Some((kind, args));
        }
        method.attrs = kept;
        let (kind, args) = found?;
        let attrs = method.attrs.clone();
        let mut params = Vec::new();
        for input in &mut method.sig.inputs {
            if let FnArg::Typed(param) = input {
                params.push(param.clone());
                param.attrs.retain(|a| !crate::attr::is_param_attr(a));
            }
        }
        Some(Method {
            kind,
            args,
            sig: method.sig.clone(),
            attrs,
            params,
        })
    }

    /// The string the marker gives `key` (`name = ".."`), if any.
    fn arg(&self, key: &str) -> Option<(String, Span)> {
        let metas = syn::parse::Parser::parse2(
            syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            self.args.clone(),
        );
        metas.ok()?.into_iter().find_map(|meta| match meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident(key) => match nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some((s.value(), s.span())),
                _ => None,
            },
            _ => None,
        })
    }

    /// What two items of one kind must not share: a tool's or prompt's name (`name = ".."`,
    /// else the method's), a resource's URI or URI template.
    fn name(&self) -> (String, Span) {
        let given = match self.kind {
            Kind::Resource => self.arg("uri").or_else(|| self.arg("template")),
            _ => self.arg("name"),
        };
        given.unwrap_or_else(|| {
            let ident = &self.sig.ident;
            (syn::ext::IdentExt::unraw(ident).to_string(), ident.span())
        })
    }

    /// The free function standing for the method, through the attribute's phases; returns
    /// the path `server!` lists it by and the tokens.
    fn expand(
        &self,
        self_ident: &syn::Ident,
        self_ty: &Type,
        krate: &Path,
        server: &ServerInput,
    ) -> (Path, TokenStream) {
        let ident = format_ident!("__mcp_method_{}_{}", self_ident, self.sig.ident);
        let function = self.function(&ident, self_ty, krate);
        let mut errors = Errors::default();
        let mut def = AnnotatedFn::from_syn(self.kind, self.args.clone(), function, &mut errors);
        // Named after the method, not the function standing for it.
        if def.attrs.name.is_none() {
            let ident = &self.sig.ident;
            let name = syn::ext::IdentExt::unraw(ident).to_string();
            def.attrs.name = Some(syn::LitStr::new(&name, ident.span()));
        }
        if let Some(path) = &def.attrs.server {
            errors.spanned(
                path,
                "a method belongs to its #[mcp_server]: `server = ..` is for free functions",
            );
        }
        if def.attrs.krate.is_none() {
            def.attrs.krate = server.krate.clone();
        }
        crate::valid::check(&def, &mut errors);
        // The stub only without mistakes: its parameters repeat the method's types, whose
        // mistakes (a reference) would be reported again.
        let tokens = if errors.is_empty() {
            let mut tokens = crate::expand::annotated(&def);
            if self.kind == Kind::Tool {
                tokens.extend(self.stub(&def, self_ty));
            }
            tokens
        } else {
            crate::fallback::annotated(&def, &errors)
        };
        (ident.into(), tokens)
    }

    /// `Notes::call_add(&caller, a, ..)`: the tool's typed call stub, in an impl block of the
    /// struct's own (a free function's is `add::call`); `&self` is left out, as the state
    /// the server provides.
    fn stub(&self, def: &AnnotatedFn, self_ty: &Type) -> TokenStream {
        let method = syn::ext::IdentExt::unraw(&self.sig.ident);
        let ident = format_ident!("call_{}", method, span = self.sig.ident.span());
        let stub = crate::expand::stub_named(def, &def.krate(), &ident);
        let cfgs = crate::expand::cfgs(def);
        quote! {
            #(#cfgs)*
            impl #self_ty {
                #stub
            }
        }
    }

    /// `async fn __mcp_method_Notes_add(__mcp_self: State<Notes>, a: A, ..) -> R`, calling the
    /// method; `Self` in the signature is the struct.
    fn function(&self, ident: &syn::Ident, self_ty: &Type, krate: &Path) -> syn::ItemFn {
        let receiver_span = self
            .sig
            .receiver()
            .map_or_else(|| self.sig.ident.span(), Spanned::span);
        // Where the receiver is, resolved as the call below (one local, one hygiene).
        let receiver_span = Span::call_site().located_at(receiver_span);
        let state = quote_spanned!(receiver_span=> __mcp_self: #krate::State<#self_ty>);
        let mut params = self.params.clone();
        let mut output = self.sig.output.clone();
        let mut replace = ReplaceSelf(self_ty);
        for param in &mut params {
            replace.visit_type_mut(&mut param.ty);
        }
        replace.visit_return_type_mut(&mut output);
        let args = params.iter().map(|p| match &*p.pat {
            Pat::Ident(pi) => {
                let ident = &pi.ident;
                quote!(#ident)
            }
            other => quote!(#other),
        });
        let method = &self.sig.ident;
        let asyncness = &self.sig.asyncness;
        let call = match asyncness {
            Some(_) => quote!(<#self_ty>::#method(&__mcp_self, #(#args),*).await),
            None => quote!(<#self_ty>::#method(&__mcp_self, #(#args),*)),
        };
        let docs = self
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("doc") || a.path().is_ident("cfg"));
        syn::parse_quote! {
            #(#docs)*
            #[allow(non_snake_case, clippy::too_many_arguments)]
            #asyncness fn #ident(#state, #(#params),*) #output {
                #call
            }
        }
    }
}

/// The kind a marker attribute names: `#[tool]`, `#[prompt]`, `#[resource]`.
fn marker(attr: &syn::Attribute) -> Option<Kind> {
    let path = attr.path();
    if path.is_ident("tool") {
        Some(Kind::Tool)
    } else if path.is_ident("prompt") {
        Some(Kind::Prompt)
    } else if path.is_ident("resource") {
        Some(Kind::Resource)
    } else {
        None
    }
}

/// The word a marker is written with, for messages.
fn marker_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Tool => "#[tool]",
        Kind::Prompt => "#[prompt]",
        Kind::Resource => "#[resource]",
    }
}

/// A marked method takes `&self` (the struct is shared between calls) and is `async`;
/// whether it does.
fn check_method(kind: Kind, sig: &syn::Signature, errors: &mut Errors) -> bool {
    let marker = marker_word(kind);
    match sig.receiver() {
        None => errors.spanned(
            &sig.ident,
            format_args!(
                "a {marker} method takes `&self`, the server's state; a function without `self` is an item of its own: move it out of the impl and annotate it `{}`",
                kind.attribute()
            ),
        ),
        Some(r) if !shared_receiver(sig) => {
            errors.spanned(
                r,
                format_args!(
                    "a {marker} method takes `&self`: the server shares one value between concurrent calls (put what changes behind a `Mutex`)"
                ),
            );
        }
        Some(_) => {}
    }
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            format_args!(
                "a {marker} method is an `async fn`; for blocking work call `mcp_registry::run_blocking(|| ..).await` inside it"
            ),
        );
    }
    shared_receiver(sig) && sig.asyncness.is_some()
}

/// Whether the method takes `&self`.
fn shared_receiver(sig: &syn::Signature) -> bool {
    sig.receiver()
        .is_some_and(|r| r.reference.is_some() && r.mutability.is_none() && r.colon_token.is_none())
}

/// Two items of one kind with one name (or URI) are refused on the second.
fn check_unique_names(methods: &[Method], errors: &mut Errors) {
    let mut seen: Vec<(Kind, String, String)> = Vec::new();
    for method in methods {
        let (name, span) = method.name();
        let first = seen
            .iter()
            .find(|(kind, other, _)| *kind == method.kind && *other == name);
        if let Some((_, _, by)) = first {
            let (what, fix) = match method.kind {
                Kind::Resource => ("URI", "give one another URI"),
                _ => ("name", "rename one (`name = \"..\"`)"),
            };
            errors.at(
                span,
                format_args!(
                    "{} `{name}` is already the {what} of method `{by}`: it must be unique within a server; {fix}",
                    method.kind.noun(),
                ),
            );
        } else {
            seen.push((method.kind, name, method.sig.ident.to_string()));
        }
    }
}

/// Replaces `Self` in types with the struct's type (the free function has no `Self`).
struct ReplaceSelf<'a>(&'a Type);

impl VisitMut for ReplaceSelf<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(p) = ty
            && p.qself.is_none()
            && p.path.is_ident("Self")
        {
            *ty = self.0.clone();
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// `value.into_server()` and `Arc::new(value).server()`, and `server!`'s checks of the name;
/// stand-ins for them when the server has mistakes (`built` is `None`).
fn server_fns(server: &ServerInput, self_ty: &Type, built: Option<()>) -> TokenStream {
    let krate = server.krate();
    let name = server.name_value();
    let (checks, body) = match built {
        Some(()) => crate::expand::method_server(server, quote!(self)),
        None => (
            TokenStream::new(),
            quote!(::core::unreachable!("this server failed to compile")),
        ),
    };
    let doc = format!(
        "The `{name}` MCP server: this value's `#[tool]`, `#[prompt]` and `#[resource]` methods, sharing it as their state."
    );
    quote! {
        #checks

        impl #self_ty {
            #[doc = #doc]
            ///
            /// Register it with `Registry::builder().server(..)`; every call of its items reads
            /// this value (a `State<Self>` parameter or `ctx.get::<Self>()` finds it too).
            #[allow(dead_code)]
            pub fn server(self: ::std::sync::Arc<Self>) -> #krate::Server {
                #body
            }

            #[doc = #doc]
            ///
            /// [`server`](Self::server) of this value, shared from now on (keep an `Arc` and
            /// call `server` to reach it from the host too).
            #[allow(dead_code)]
            pub fn into_server(self) -> #krate::Server {
                Self::server(::std::sync::Arc::new(self))
            }
        }
    }
}
