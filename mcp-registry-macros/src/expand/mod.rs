//! Code generation only; everything it reads has been checked by `valid`. Per kind: tools
//! here, `prompt`, `resource` and `server` beside.
//!
//! `#[mcp_tool] fn add(..)` keeps the function as written and adds, under the same name in
//! the *type* namespace, a hidden braced struct `add {}` implementing
//! `__private::ToolItem` (the tool name as a constant, and the `Tool`, built once and cached).
//! A braced struct occupies no value-namespace name, so `add` still calls the function while
//! `<add as ToolItem>` (what `server!` writes), `add::tool()` and `use ops::add;` reach the
//! tool through the very path that names the function, with the function's visibility.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Path};

use crate::ast::AnnotatedFn;
use crate::kind::Kind;

mod prompt;
pub(crate) mod resource;
mod server;
mod stub;
pub(crate) use stub::stub_named;

pub(crate) use server::{method_server, server, server_name_check, slice_declaration};

/// `#[mcp_tool]`, `#[mcp_prompt]` or `#[mcp_resource]` on a checked function: the function,
/// unchanged, and the items next to it.
pub(crate) fn annotated(def: &AnnotatedFn) -> TokenStream {
    match def.kind {
        Kind::Tool => tool(def),
        Kind::Prompt => prompt::expand(def),
        Kind::Resource => resource::expand(def),
    }
}

pub(crate) fn hidden(name: &str) -> Ident {
    // Mixed-site hygiene: a user's function named like a local of ours cannot be captured.
    Ident::new(name, Span::mixed_site())
}

/// The most parameters a tool function takes (the runtime crate's `describeN`/`extractN`
/// go up to this many, as axum's handlers do).
pub(crate) const MAX_PARAMS: usize = 16;

/// `ty` with every `'_` lifetime made `'static`.
pub(crate) fn static_lifetimes(ty: &syn::Type) -> syn::Type {
    struct Static;
    impl syn::visit_mut::VisitMut for Static {
        fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
            if lifetime.ident == "_" {
                lifetime.ident = Ident::new("static", lifetime.ident.span());
            }
        }
    }
    let mut ty = ty.clone();
    syn::visit_mut::VisitMut::visit_type_mut(&mut Static, &mut ty);
    ty
}

/// `Some("text")` or `None`, as an `Option<&'static str>` expression.
pub(crate) fn option_str(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

/// `timeout = ".."` as an `Option<Duration>` expression; the inline `const` keeps the
/// metadata holding it promotable to a `'static` (a `const fn` call alone is not).
pub(crate) fn option_timeout(timeout: Option<&crate::attr::Timeout>) -> TokenStream {
    match timeout {
        Some(timeout) => {
            let millis = timeout.millis;
            quote!(::core::option::Option::Some(const { ::core::time::Duration::from_millis(#millis) }))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// The attributes copied from the function onto every generated item, so that
/// `#[cfg(..)]` on the function removes the tool too.
pub(crate) fn cfgs(tool: &AnnotatedFn) -> Vec<&syn::Attribute> {
    tool.item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect()
}

/// What the items standing for an annotated function are: the item trait `server!` reaches
/// them through, its getter, the type the getter returns, and the name rule.
pub(crate) struct ItemKind {
    /// `ToolItem`, `PromptItem`.
    item_trait: &'static str,
    /// `tool`, `prompt`: the getter's name and, in its doc, what it makes.
    getter: &'static str,
    /// `Tool`, `Prompt`.
    ty: &'static str,
    /// `tool_name_error`, `prompt_name_error`.
    name_error: &'static str,
}

/// A tool's items.
pub(crate) const TOOL: ItemKind = ItemKind {
    item_trait: "ToolItem",
    getter: "tool",
    ty: "Tool",
    name_error: "tool_name_error",
};

/// A prompt's items.
pub(crate) const PROMPT: ItemKind = ItemKind {
    item_trait: "PromptItem",
    getter: "prompt",
    ty: "Prompt",
    name_error: "prompt_name_error",
};

/// The items standing for the function: the struct, `add::tool()` (or `::prompt()`), and the
/// item trait's impl whose getter has the given body. The name is checked there too, by the
/// runtime crate's rule in constant evaluation: a name it refuses is a compile error at the
/// name.
pub(crate) fn items(
    def: &AnnotatedFn,
    kind: &ItemKind,
    krate: &Path,
    body: TokenStream,
) -> TokenStream {
    items_with(def, kind, krate, body, TokenStream::new())
}

/// [`items`], with `methods` beside the getter in the struct's impl block (a tool's call
/// stub: one impl block per item, not two, is cheaper to compile).
pub(crate) fn items_with(
    def: &AnnotatedFn,
    kind: &ItemKind,
    krate: &Path,
    body: TokenStream,
    methods: TokenStream,
) -> TokenStream {
    let ident = &def.item.sig.ident;
    let cfgs = cfgs(def);
    let (name, span) = def.name();
    let name = syn::LitStr::new(&name, span);
    let [item_trait, getter, ty, name_error] =
        [kind.item_trait, kind.getter, kind.ty, kind.name_error]
            .map(|word| Ident::new(word, Span::call_site()));
    let check = name_check(span, quote!(#krate::__private::#name_error(#name)));
    let getter_fn = quote! {
        pub fn #getter() -> #krate::#ty {
            <Self as #krate::__private::#item_trait>::#getter()
        }
    };
    let standing = item_struct(def, kind.getter, getter_fn, methods);
    quote! {
        #(#cfgs)*
        #check

        #standing

        #(#cfgs)*
        #[allow(deprecated, unused_mut, unused_variables, clippy::too_many_arguments)]
        impl #krate::__private::#item_trait for #ident {
            const NAME: &'static str = #name;

            fn #getter() -> #krate::#ty {
                #body
            }
        }
    }
}

/// The hidden struct standing for the function and its inherent impl: `getter_fn` (the
/// public getter of the MCP `what` made from the function, documented here) and `methods`.
pub(crate) fn item_struct(
    def: &AnnotatedFn,
    what: &str,
    getter_fn: TokenStream,
    methods: TokenStream,
) -> TokenStream {
    let ident = &def.item.sig.ident;
    let vis = &def.item.vis;
    let cfgs = cfgs(def);
    let doc = format!("The MCP {what} made from this function (built on first use, then shared).");
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #(#cfgs)*
        impl #ident {
            #[doc = #doc]
            #[allow(dead_code)]
            #getter_fn

            #methods
        }
    }
}

/// `#[mcp_tool]`: the function, unchanged, and the tool next to it.
pub(crate) fn tool(tool: &AnnotatedFn) -> TokenStream {
    let krate = tool.krate();
    let call = hidden("__mcp_start");
    let values: Vec<Ident> = (0..tool.params.len())
        .map(|i| hidden(&format!("__mcp_arg{i}")))
        .collect();
    // `'_` in a parameter's type is `'static` for the start function: the call's future owns
    // its arguments, so they cannot borrow from anything shorter.
    let plain: Vec<syn::Type> = tool
        .params
        .iter()
        .map(|p| static_lifetimes(&p.ty))
        .collect();
    let docs = param_docs(tool);
    let types = checked_types(tool, quote!(#krate::tool::param::ToolParamType));
    let meta = tool_meta(tool, &krate);
    let output = tool.output();
    // Spanned on the return type: a type that cannot be returned is reported there.
    let output_schema = quote_spanned! {output.span()=>
        <#output as #krate::IntoToolResult>::output_schema
    };
    let start = start_call(tool, &krate, &values);
    let signature = hidden(&format!("signature{}", tool.params.len()));
    let body = quote! {
        // Starts a call once the arguments are read (by the shared code of `Params`).
        fn #call(#(#values: #plain),*) -> #krate::__private::HandlerFuture {
            #start
        }
        #krate::__private::cached_tool(
            ::core::any::TypeId::of::<Self>(),
            #meta,
            #krate::__private::#signature::<#(#types),*>(&#krate::__private::Params::<(#(#plain,)*)> {
                start: #call,
                docs: [#(#docs),*],
            }),
            #output_schema,
        )
    };
    let mut items = items_with(tool, &TOOL, &krate, body, stub::stub(tool, &krate));
    items.extend(attachment(tool, &krate, "tool"));
    with_function(tool, items)
}

/// The user's function (as it came when we did not edit it) followed by `items`.
pub(crate) fn with_function(def: &AnnotatedFn, items: TokenStream) -> TokenStream {
    let item = &def.item;
    match &def.original {
        Some(original) => quote!(#original #items),
        None => quote!(#item #items),
    }
}

/// `description = ".."`, else the doc comment's text before its first heading.
pub(crate) fn description(def: &AnnotatedFn) -> Option<String> {
    def.attrs
        .description
        .as_ref()
        .map(syn::LitStr::value)
        .or_else(|| def.docs.description.clone())
}

/// `.complete(name, path)` for each parameter with `#[arg(complete = path)]`, spanned on the
/// path (a prompt's arguments, a template's variables).
pub(crate) fn completers(def: &AnnotatedFn) -> Vec<TokenStream> {
    def.params
        .iter()
        .filter_map(|p| {
            let path = p.attrs.complete.as_ref()?;
            let name = p.property()?;
            Some(quote_spanned!(path.span()=> .complete(#name, #path)))
        })
        .collect()
}

/// Each parameter's `(property, description)`: the description from `#[arg(description)]`,
/// else from the doc comment's `# Arguments` entry naming the parameter or its property.
pub(crate) fn param_docs(tool: &AnnotatedFn) -> Vec<TokenStream> {
    tool.params
        .iter()
        .map(|param| {
            let property = param.property().unwrap_or_default();
            let text = param
                .attrs
                .description
                .as_ref()
                .map(syn::LitStr::value)
                .or_else(|| {
                    let ident = param
                        .ident
                        .as_ref()
                        .map(|i| syn::ext::IdentExt::unraw(i).to_string());
                    tool.docs
                        .arguments
                        .iter()
                        .find(|a| Some(&a.name) == ident.as_ref() || a.name == property)
                        .map(|a| a.text.clone())
                });
            let text = option_str(text.as_deref());
            quote!((#property, #text))
        })
        .collect()
}

/// The parameter types as written (with their spans), through `param_type` (`ToolParamType`,
/// `PromptParamType`): a type that is no parameter is reported on the parameter, once. `Params<(A, B, ..)>` reads and
/// describes them with code generic over the types only, compiled once per signature rather
/// than once per tool.
pub(crate) fn checked_types(def: &AnnotatedFn, param_type: TokenStream) -> Vec<TokenStream> {
    def.params
        .iter()
        .map(|p| {
            // `<` on the type's first token and `>::Checked` on its last, so an error on the
            // projection underlines the whole type.
            let ty = &p.ty;
            let mut tokens = ty.to_token_stream().into_iter();
            let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
            let last = tokens.last().map_or(first, |t| t.span());
            let open = quote_spanned!(first=> <);
            let close = quote_spanned!(last=> as #param_type>::Checked);
            quote!(#open #ty #close)
        })
        .collect()
}

/// The metadata as a constant expression (`&ToolMeta { .. }`, promoted to a `'static`):
/// rustc checks its shape, and the runtime reads it without parsing.
fn tool_meta(tool: &AnnotatedFn, krate: &Path) -> TokenStream {
    let (name, _) = tool.name();
    let title = option_str(tool.attrs.title.as_ref().map(syn::LitStr::value).as_deref());
    let description = option_str(description(tool).as_deref());
    let hints = [
        tool.attrs.read_only,
        tool.attrs.destructive,
        tool.attrs.idempotent,
        tool.attrs.open_world,
    ]
    .map(|hint| match hint {
        Some(yes) => quote!(::core::option::Option::Some(#yes)),
        None => quote!(::core::option::Option::None),
    });
    let timeout = option_timeout(tool.attrs.timeout.as_ref());
    let task = match tool.attrs.task {
        Some(support) => {
            let variant = quote::format_ident!("{}", support);
            quote!(::core::option::Option::Some(#krate::protocol::TaskSupport::#variant))
        }
        None => quote!(::core::option::Option::None),
    };
    let ui = option_str(tool.attrs.ui.as_ref().map(syn::LitStr::value).as_deref());
    quote! {
        &#krate::__private::ToolMeta {
            name: #name,
            title: #title,
            description: #description,
            hints: [#(#hints),*],
            timeout: #timeout,
            task: #task,
            ui: #ui,
        }
    }
}

/// The call of the function with its arguments, as a `HandlerFuture`: boxed for an `async fn`,
/// on the blocking pool for `blocking`, else run at once. Spanned on the function's name, so
/// a future that is not `Send` is reported there; the output's conversion is spanned on the
/// return type.
fn start_call(tool: &AnnotatedFn, krate: &Path, values: &[Ident]) -> TokenStream {
    let ident = &tool.item.sig.ident;
    let output = tool.output();
    let convert = quote_spanned! {output.span()=>
        <#output as #krate::IntoToolResult>::into_tool_result
    };
    if tool.item.sig.asyncness.is_some() {
        quote_spanned! {ident.span()=>
            ::std::boxed::Box::pin(#krate::__private::call_async(#ident(#(#values),*), #convert))
        }
    } else if matches!(tool.attrs.blocking, Some((true, _))) {
        quote_spanned! {ident.span()=>
            #krate::__private::call_blocking(move || #ident(#(#values),*), #convert)
        }
    } else {
        quote_spanned!(ident.span()=> #krate::__private::call_sync(#ident(#(#values),*), #convert))
    }
}

/// A constant that panics with the message `error` (an `Option<Message>` computed in
/// constant evaluation) returns, if any. Every token of the panic is spanned on the name, so
/// rustc reports the error there and only there.
pub(crate) fn name_check(span: Span, error: TokenStream) -> TokenStream {
    quote_spanned! {span=>
        const _: () = match #error {
            ::core::option::Option::Some(error) => ::core::panic!("{}", error.as_str()),
            ::core::option::Option::None => {}
        };
    }
}

/// `server = path` on an annotated function: its element in the server's distributed slice,
/// made by `Attachment::tool` (or `prompt`, `resource`).
pub(crate) fn attachment(def: &AnnotatedFn, krate: &Path, constructor: &str) -> TokenStream {
    let Some(path) = &def.attrs.server else {
        return TokenStream::new();
    };
    let mut slice = path.clone();
    if let Some(last) = slice.segments.last_mut() {
        last.ident = crate::ast::attached_ident(&last.ident);
    }
    let ident = &def.item.sig.ident;
    let cfgs = cfgs(def);
    let constructor = Ident::new(constructor, Span::call_site());
    quote! {
        #(#cfgs)*
        const _: () = {
            #[#krate::__private::linkme::distributed_slice(#slice)]
            #[linkme(crate = #krate::__private::linkme)]
            static __MCP_ATTACHMENT: #krate::__private::Attachment =
                #krate::__private::Attachment::#constructor::<#ident>();
        };
    }
}
