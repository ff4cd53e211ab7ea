//! `server!`: the build function (named by `fn = ..`, else hidden), the compile-time checks
//! of its name and of the uniqueness of its items' names, URIs and templates, and the
//! submission to the collection.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Path};

use super::{hidden, name_check};
use crate::ast::ServerInput;

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

/// One of `server!`'s lists: its paths and how its items are reached and compared.
struct List<'a> {
    paths: &'a [Path],
    /// `tool`, `prompt`, `resource`: the item in messages.
    noun: &'static str,
    /// `ToolItem`, `PromptItem`, `ResourceItem`.
    item_trait: &'static str,
    /// The constant two items of a server must not share: `NAME`, `KEY`.
    key: &'static str,
    /// What a repeated key means, after "has the same ".
    same: &'static str,
    /// The attribute a listed function needs.
    attribute: &'static str,
    /// The attribute as the fix writes it.
    fix: &'static str,
}

impl List<'_> {
    /// The hidden name the `i`th path is imported under (see [`scope`]), spanned on the path.
    fn alias(&self, i: usize, path: &Path) -> Ident {
        Ident::new(&format!("__mcp_{}_{i}", self.noun), path.span())
    }

    /// `<alias as ToolItem>`, spanned on the path so a path that is no item is reported there.
    fn item(&self, i: usize, path: &Path, krate: &Path) -> TokenStream {
        let item_trait = Ident::new(self.item_trait, Span::call_site());
        let alias = self.alias(i, path);
        quote_spanned! {path.span()=> <#alias as #krate::__private::#item_trait>}
    }

    /// `[<a as ToolItem>::tool, ..]`: the items' functions named `getter`.
    fn getters(&self, getter: &str, krate: &Path) -> TokenStream {
        let getter = Ident::new(getter, Span::call_site());
        let items = self
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| self.item(i, p, krate));
        quote!([#(#items::#getter),*])
    }

    /// The fallbacks of the paths' hidden names, then the paths imported under them.
    fn imports(&self, krate: &Path) -> (Vec<TokenStream>, Vec<TokenStream>) {
        self.paths
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let alias = self.alias(i, path);
                let fallback = quote!(pub type #alias = #krate::__private::NotAnnotated;);
                (fallback, quote!(use #path as #alias;))
            })
            .unzip()
    }

    /// A function without the attribute (the path reached [`NotAnnotated`]) is refused on
    /// its path, saying which attribute to add.
    ///
    /// [`NotAnnotated`]: ../../mcp_registry/__private/struct.NotAnnotated.html
    fn annotated_checks(&self, server: &str, krate: &Path) -> TokenStream {
        let key = Ident::new(self.key, Span::call_site());
        let checks = self.paths.iter().enumerate().map(|(i, path)| {
            let item = self.item(i, path, krate);
            let path_text = quote!(#path).to_string().replace(' ', "");
            let message = format!(
                "server `{server}`: `{path_text}` is not annotated with `{attribute}`; add {fix} to the function to list it as a {noun}",
                attribute = self.attribute,
                fix = self.fix,
                noun = self.noun,
            );
            // On the function's name, the last segment (a span cannot cover a whole path).
            let span = path.segments.last().map_or_else(|| path.span(), |s| s.ident.span());
            quote_spanned! {span=>
                const _: () = if #krate::__private::is_not_annotated(#item::#key) {
                    ::core::panic!(#message)
                };
            }
        });
        quote!(#(#checks)*)
    }

    /// One constant evaluation finds the first repeated key; its arm reports it on the path.
    fn duplicate_check(&self, server: &str, krate: &Path) -> TokenStream {
        if self.paths.is_empty() {
            return TokenStream::new();
        }
        let key = Ident::new(self.key, Span::call_site());
        let keys = self.paths.iter().enumerate().map(|(i, p)| {
            let item = self.item(i, p, krate);
            quote!(#item::#key)
        });
        let arms = self.paths.iter().enumerate().skip(1).map(|(i, path)| {
            let path_text = quote!(#path).to_string().replace(' ', "");
            let message = format!(
                "server `{server}`: {} `{path_text}` has the same {}",
                self.noun, self.same
            );
            quote_spanned! {path.span()=>
                ::core::option::Option::Some(#i) => ::core::panic!(#message),
            }
        });
        quote! {
            const _: () = match #krate::__private::first_duplicate([#(#keys),*]) {
                #(#arms)*
                _ => {}
            };
        }
    }
}

/// The three lists of `server!`, in the order their items are added.
fn lists(server: &ServerInput) -> [List<'_>; 3] {
    [
        List {
            paths: server.tools.as_deref().unwrap_or_default(),
            noun: "tool",
            item_trait: "ToolItem",
            key: "NAME",
            same: "name as a tool listed before it; tool names must be unique within a server",
            attribute: "#[mcp_tool]",
            fix: "`#[mcp_tool]`",
        },
        List {
            paths: server.prompts.as_deref().unwrap_or_default(),
            noun: "prompt",
            item_trait: "PromptItem",
            key: "NAME",
            same: "name as a prompt listed before it; prompt names must be unique within a server",
            attribute: "#[mcp_prompt]",
            fix: "`#[mcp_prompt]`",
        },
        List {
            paths: server.resources.as_deref().unwrap_or_default(),
            noun: "resource",
            item_trait: "ResourceItem",
            key: "KEY",
            same: "URI or URI template as a resource listed before it; they must be unique within a server",
            attribute: "#[mcp_resource]",
            fix: "`#[mcp_resource(uri = \"..\")]` (or `template = \"..\"`)",
        },
    ]
}

/// The items every block naming the listed paths starts with: each path imported under a
/// hidden name, over a glob import of a fallback of that name ([`NotAnnotated`]). An explicit
/// import shadows a glob one in each namespace it fills, so a function `#[mcp_tool]` annotated
/// (a type of its name beside it) is reached, while a plain function (a value only) leaves the
/// type namespace to the fallback, which the checks refuse with a message saying what to add,
/// instead of rustc's "expected type, found function".
///
/// [`NotAnnotated`]: ../../mcp_registry/__private/struct.NotAnnotated.html
fn scope(server: &ServerInput, krate: &Path) -> TokenStream {
    let (fallbacks, imports): (Vec<_>, Vec<_>) =
        lists(server).iter().map(|list| list.imports(krate)).unzip();
    let (fallbacks, imports) = (fallbacks.concat(), imports.concat());
    if imports.is_empty() {
        return TokenStream::new();
    }
    let module = hidden("__mcp_not_annotated");
    quote! {
        #[allow(non_camel_case_types)]
        mod #module {
            #(#fallbacks)*
        }
        #[allow(unused_imports)]
        use #module::*;
        #(
            #[allow(unused_imports)]
            #imports
        )*
    }
}

/// The expression building the `Server`: the builder with its metadata, prompts and
/// resources, finished with the tools (and the attached items, if the server has a slice).
fn build(
    server: &ServerInput,
    name: &str,
    krate: &Path,
    state: Option<TokenStream>,
) -> TokenStream {
    let [tools, prompts, resources] = lists(server);
    let version = match &server.version {
        Some(v) => quote!(#v),
        None => quote!(::core::env!("CARGO_PKG_VERSION")),
    };
    let mut builder = quote!(#krate::Server::builder(#name).version(#version));
    if let Some(state) = state {
        builder.extend(quote!(.shared_extension(#state)));
    }
    if let Some(t) = &server.title {
        builder.extend(quote!(.title(#t)));
    }
    if let Some(i) = &server.instructions {
        builder.extend(quote!(.instructions(#i)));
    }
    if !prompts.paths.is_empty() {
        let prompts = prompts.getters("prompt", krate);
        builder = quote!(#krate::__private::with_prompts(#builder, &#prompts));
    }
    if !resources.paths.is_empty() {
        let resources = resources.getters("add_to", krate);
        builder = quote!(#krate::__private::with_resources(#builder, &#resources));
    }
    let tools = tools.getters("tool", krate);
    match &server.getter {
        Some(g) => {
            let slice = slice_ident(server, &g.ident);
            quote!(#krate::__private::build_attached_server(#builder, &#tools, &#slice))
        }
        None => quote!(#krate::__private::build_server(#builder, &#tools)),
    }
}

/// `server!`: the getter (or a hidden build function), the slice, the checks and the
/// submission.
pub(crate) fn server(server: &ServerInput) -> TokenStream {
    let krate = server.krate();
    let name = server.name_value();
    let scope = scope(server, &krate);
    let mut checks = vec![
        scope.clone(),
        server_name_check(&krate, server.name.as_ref()),
    ];
    for list in lists(server) {
        checks.push(list.annotated_checks(&name, &krate));
        checks.push(list.duplicate_check(&name, &krate));
    }
    let build = build(server, &name, &krate, None);
    let body = quote! {
        static __MCP_SERVER: #krate::__private::ServerCell = #krate::__private::ServerCell::new();
        __MCP_SERVER.get(|| #build)
    };
    let (getter, declaration, build_fn) = match &server.getter {
        Some(g) => {
            let (vis, ident) = (&g.vis, &g.ident);
            let doc = format!(
                "The `{name}` MCP server defined with `server!` (built on the first call, then shared)."
            );
            let getter = quote! {
                #[doc = #doc]
                #vis fn #ident() -> #krate::Server {
                    #scope
                    #body
                }
            };
            (getter, slice_declaration(server, g, &krate), ident.clone())
        }
        None => {
            // Inside the checks' block: nothing is named in the user's module.
            let ident = hidden("__mcp_server");
            checks.push(quote! {
                fn #ident() -> #krate::Server {
                    #body
                }
            });
            (TokenStream::new(), TokenStream::new(), ident)
        }
    };
    let submit = server.collect.as_ref().is_none_or(|c| c.value).then(|| {
        quote! {
            #krate::__private::inventory::submit! {
                #krate::ServerRegistration::new(
                    #name,
                    #build_fn,
                    ::core::concat!(::core::file!(), ":", ::core::line!()),
                )
            }
        }
    });
    quote! {
        #getter
        #declaration
        const _: () = {
            #(#checks)*
            #submit
        };
    }
}

/// `#[mcp_server]`'s server: the checks `server!` makes of its name (its items' names were
/// checked by the attribute), and the body of its `server()`, which builds the server with
/// `state` (an `Arc` of the struct) attached. Built on each call: each value is a server.
pub(crate) fn method_server(
    server: &ServerInput,
    state: TokenStream,
) -> (TokenStream, TokenStream) {
    let krate = server.krate();
    let name = server.name_value();
    let scope = scope(server, &krate);
    let check = server_name_check(&krate, server.name.as_ref());
    let build = build(server, &name, &krate, Some(state));
    (quote!(const _: () = { #check };), quote!({ #scope #build }))
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
