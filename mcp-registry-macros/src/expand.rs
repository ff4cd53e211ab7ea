//! Code generation only; everything it reads has been checked by `valid`.
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

use crate::ast::{ServerInput, ToolFn};

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
pub(crate) fn cfgs(tool: &ToolFn) -> Vec<&syn::Attribute> {
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
pub(crate) fn items(def: &ToolFn, kind: &ItemKind, krate: &Path, body: TokenStream) -> TokenStream {
    let ident = &def.item.sig.ident;
    let vis = &def.item.vis;
    let cfgs = cfgs(def);
    let (name, span) = def.tool_name();
    let name = syn::LitStr::new(&name, span);
    let [item_trait, getter, ty, name_error] =
        [kind.item_trait, kind.getter, kind.ty, kind.name_error]
            .map(|word| Ident::new(word, Span::call_site()));
    let check = name_check(span, quote!(#krate::__private::#name_error(#name)));
    let doc = format!(
        "The MCP {} made from this function (built on first use, then shared).",
        kind.getter
    );
    quote! {
        #(#cfgs)*
        #check

        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #(#cfgs)*
        impl #ident {
            #[doc = #doc]
            #[allow(dead_code)]
            pub fn #getter() -> #krate::#ty {
                <Self as #krate::__private::#item_trait>::#getter()
            }
        }

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

/// `#[mcp_tool]`: the function, unchanged, and the tool next to it.
pub(crate) fn tool(tool: &ToolFn) -> TokenStream {
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
    let types = checked_types(tool, &krate);
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
        fn #call(#(#values: #plain),*) -> #krate::__private::CallFuture {
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
    let mut items = items(tool, &TOOL, &krate, body);
    items.extend(attachment(tool, &krate, "tool"));
    let item = &tool.item;
    match &tool.original {
        Some(original) => quote!(#original #items),
        None => quote!(#item #items),
    }
}

/// Each parameter's `(property, description)`: the description from `#[arg(description)]`,
/// else from the doc comment's `# Arguments` entry naming the parameter or its property.
pub(crate) fn param_docs(tool: &ToolFn) -> Vec<TokenStream> {
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

/// The parameter types as written (with their spans), through `ToolParamType`: a type that
/// is no `ToolParam` is reported on the parameter, once. `Params<(A, B, ..)>` reads and
/// describes them with code generic over the types only, compiled once per signature rather
/// than once per tool.
fn checked_types(tool: &ToolFn, krate: &Path) -> Vec<TokenStream> {
    tool.params
        .iter()
        .map(|p| {
            // `<` on the type's first token and `>::Checked` on its last, so an error on the
            // projection underlines the whole type.
            let ty = &p.ty;
            let mut tokens = ty.to_token_stream().into_iter();
            let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
            let last = tokens.last().map_or(first, |t| t.span());
            let open = quote_spanned!(first=> <);
            let close = quote_spanned!(last=> as #krate::tool::param::ToolParamType>::Checked);
            quote!(#open #ty #close)
        })
        .collect()
}

/// The metadata as a constant expression (`&ToolMeta { .. }`, promoted to a `'static`):
/// rustc checks its shape, and the runtime reads it without parsing.
fn tool_meta(tool: &ToolFn, krate: &Path) -> TokenStream {
    let (name, _) = tool.tool_name();
    let title = option_str(tool.attrs.title.as_ref().map(syn::LitStr::value).as_deref());
    let description = tool
        .attrs
        .description
        .as_ref()
        .map(syn::LitStr::value)
        .or_else(|| tool.docs.description.clone());
    let description = option_str(description.as_deref());
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
    quote! {
        &#krate::__private::ToolMeta {
            name: #name,
            title: #title,
            description: #description,
            hints: [#(#hints),*],
            timeout: #timeout,
        }
    }
}

/// The call of the function with its arguments, as a `CallFuture`: boxed for an `async fn`,
/// on the blocking pool for `blocking`, else run at once. Spanned on the function's name, so
/// a future that is not `Send` is reported there; the output's conversion is spanned on the
/// return type.
fn start_call(tool: &ToolFn, krate: &Path, values: &[Ident]) -> TokenStream {
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

/// The compile-time check of a server's name, by the runtime crate's rule: a name it refuses
/// is a compile error at the name.
pub(crate) fn server_name_check(krate: &Path, name: Option<&syn::LitStr>) -> TokenStream {
    match name {
        Some(name) => name_check(
            name.span(),
            quote!(#krate::__private::server_name_error(#name)),
        ),
        None => TokenStream::new(),
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

/// `server!`: the build function (named by `fn = ..`, else hidden), the compile-time check
/// that tool names are unique, and the submission to the collection.
pub(crate) fn server(server: &ServerInput) -> TokenStream {
    let krate = server.krate();
    let name = server
        .name
        .as_ref()
        .map(syn::LitStr::value)
        .unwrap_or_default();
    let tools = server.tools.as_deref().unwrap_or_default();
    let name_check = server_name_check(&krate, server.name.as_ref());

    let tool_item = |path: &Path| {
        quote_spanned! {path.span()=> <#path as #krate::__private::ToolItem>}
    };
    // One constant evaluation finds the first repeated name; its arm reports it on the path.
    let names = tools.iter().map(|p| {
        let item = tool_item(p);
        quote!(#item::NAME)
    });
    let arms = tools.iter().enumerate().skip(1).map(|(i, path)| {
        let path_text = quote!(#path).to_string().replace(' ', "");
        let message = format!(
            "server `{name}`: tool `{path_text}` has the same name as a tool listed before it; tool names must be unique within a server"
        );
        quote_spanned! {path.span()=>
            ::core::option::Option::Some(#i) => ::core::panic!(#message),
        }
    });
    let prompts = server.prompts.as_deref().unwrap_or_default();
    let prompt_item = |path: &Path| {
        quote_spanned! {path.span()=> <#path as #krate::__private::PromptItem>}
    };
    let prompt_names = prompts.iter().map(|p| {
        let item = prompt_item(p);
        quote!(#item::NAME)
    });
    let prompt_arms = prompts.iter().enumerate().skip(1).map(|(i, path)| {
        let path_text = quote!(#path).to_string().replace(' ', "");
        let message = format!(
            "server `{name}`: prompt `{path_text}` has the same name as a prompt listed before it; prompt names must be unique within a server"
        );
        quote_spanned! {path.span()=>
            ::core::option::Option::Some(#i) => ::core::panic!(#message),
        }
    });
    let prompt_check = (!prompts.is_empty()).then(|| {
        quote! {
            const _: () = match #krate::__private::first_duplicate([#(#prompt_names),*]) {
                #(#prompt_arms)*
                _ => {}
            };
        }
    });
    let resources = server.resources.as_deref().unwrap_or_default();
    let resource_item = |path: &Path| {
        quote_spanned! {path.span()=> <#path as #krate::__private::ResourceItem>}
    };
    let resource_keys = resources.iter().map(|p| {
        let item = resource_item(p);
        quote!(#item::KEY)
    });
    let resource_arms = resources.iter().enumerate().skip(1).map(|(i, path)| {
        let path_text = quote!(#path).to_string().replace(' ', "");
        let message = format!(
            "server `{name}`: resource `{path_text}` has the same URI or URI template as a resource listed before it; they must be unique within a server"
        );
        quote_spanned! {path.span()=>
            ::core::option::Option::Some(#i) => ::core::panic!(#message),
        }
    });
    let resource_check = (!resources.is_empty()).then(|| {
        quote! {
            const _: () = match #krate::__private::first_duplicate([#(#resource_keys),*]) {
                #(#resource_arms)*
                _ => {}
            };
        }
    });
    let mut checks = vec![quote! {
        #name_check
        const _: () = match #krate::__private::first_duplicate([#(#names),*]) {
            #(#arms)*
            _ => {}
        };
        #prompt_check
        #resource_check
    }];

    let version = match &server.version {
        Some(v) => quote!(#v),
        None => quote!(::core::env!("CARGO_PKG_VERSION")),
    };
    let mut chain = quote!(.version(#version));
    if let Some(t) = &server.title {
        chain.extend(quote!(.title(#t)));
    }
    if let Some(i) = &server.instructions {
        chain.extend(quote!(.instructions(#i)));
    }
    let built = tools.iter().map(|p| {
        let item = tool_item(p);
        quote!(#item::tool)
    });
    let mut builder = quote!(#krate::Server::builder(#name) #chain);
    if !prompts.is_empty() {
        let prompts = prompts.iter().map(|p| {
            let item = prompt_item(p);
            quote!(#item::prompt)
        });
        builder = quote!(#krate::__private::with_prompts(#builder, &[#(#prompts),*]));
    }
    if !resources.is_empty() {
        let resources = resources.iter().map(|p| {
            let item = resource_item(p);
            quote!(#item::add_to)
        });
        builder = quote!(#krate::__private::with_resources(#builder, &[#(#resources),*]));
    }
    let slice = server
        .getter
        .as_ref()
        .map(|g| slice_ident(server, &g.ident));
    let build = match &slice {
        Some(slice) => quote! {
            #krate::__private::build_attached_server(#builder, &[#(#built),*], &#slice)
        },
        None => quote!(#krate::__private::build_server(#builder, &[#(#built),*])),
    };
    let body = quote! {
        static __MCP_SERVER: #krate::__private::ServerCell = #krate::__private::ServerCell::new();
        __MCP_SERVER.get(|| #build)
    };
    let declaration = server
        .getter
        .as_ref()
        .map(|g| slice_declaration(server, g, &krate));

    let (getter, build_fn) = match &server.getter {
        Some(g) => {
            let (vis, ident) = (&g.vis, &g.ident);
            let doc = format!(
                "The `{name}` MCP server defined with `server!` (built on the first call, then shared)."
            );
            let getter = quote! {
                #[doc = #doc]
                #vis fn #ident() -> #krate::Server {
                    #body
                }
            };
            (getter, quote!(#ident))
        }
        None => {
            let ident = hidden("__mcp_server");
            let getter = TokenStream::new();
            let local = quote! {
                fn #ident() -> #krate::Server {
                    #body
                }
            };
            checks.push(local);
            (getter, quote!(#ident))
        }
    };
    let submit = if server.collect.as_ref().is_none_or(|c| c.value) {
        quote! {
            #krate::__private::inventory::submit! {
                #krate::ServerRegistration::new(
                    #name,
                    #build_fn,
                    ::core::concat!(::core::file!(), ":", ::core::line!()),
                )
            }
        }
    } else {
        TokenStream::new()
    };
    quote! {
        #getter
        #declaration
        const _: () = {
            #(#checks)*
            #submit
        };
    }
}

/// The program-wide unique name of a server's distributed slice.
fn slice_ident(server: &ServerInput, getter: &Ident) -> Ident {
    let getter = syn::ext::IdentExt::unraw(getter);
    hidden(&format!("__MCP_SERVER_{getter}_{:016x}", server.seed))
}

/// `server!(.., fn = math)`: the distributed slice items attach to with `server = math`,
/// with the getter's visibility, reached as `__mcp_attached_math` beside the getter.
pub(crate) fn slice_declaration(
    server: &ServerInput,
    getter: &crate::ast::Getter,
    krate: &Path,
) -> TokenStream {
    let slice = slice_ident(server, &getter.ident);
    let alias = crate::ast::attached_ident(&getter.ident);
    let alias = Ident::new(&alias.to_string(), Span::call_site());
    let vis = &getter.vis;
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        #[#krate::__private::linkme::distributed_slice]
        #[linkme(crate = #krate::__private::linkme)]
        #vis static #slice: [#krate::__private::Attachment];

        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #slice as #alias;
    }
}

/// `server = path` on an annotated function: its element in the server's distributed slice,
/// made by `Attachment::tool` (or `prompt`, `resource`).
pub(crate) fn attachment(def: &ToolFn, krate: &Path, constructor: &str) -> TokenStream {
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
