//! What a macro emits when the input has mistakes: the user's function unchanged, the errors,
//! and stand-ins for the generated items, so that code naming them (`server!`, `add::tool()`)
//! does not add errors of its own. One mistake, one message.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::AnnotatedFn;
use crate::ctxt::Errors;
use crate::expand;
use crate::kind::Kind;

/// `#[mcp_tool]`, `#[mcp_prompt]` or `#[mcp_resource]` on a function with mistakes.
pub(crate) fn annotated(def: &AnnotatedFn, errors: &Errors) -> TokenStream {
    let item = &def.item;
    let errors = errors.to_compile_errors();
    // A function with a receiver sits in an impl block, where no struct can be declared.
    if def.receiver.is_some() {
        return quote!(#errors #item);
    }
    let krate = def.krate();
    let message = format!("this {} failed to compile", def.kind.noun());
    let unreachable = quote!(::core::unreachable!(#message));
    let stubs = match def.kind {
        Kind::Tool => expand::items(def, &expand::TOOL, &krate, unreachable),
        Kind::Prompt => expand::items(def, &expand::PROMPT, &krate, unreachable),
        Kind::Resource => resource_stubs(def, &krate, unreachable),
    };
    quote! {
        #errors
        #item
        #stubs
    }
}

/// A resource's stand-ins, and its parameters' checks too (they depend on types only rustc
/// knows): every mistake in one compile.
fn resource_stubs(resource: &AnnotatedFn, krate: &syn::Path, body: TokenStream) -> TokenStream {
    let own = &resource.attrs.resource;
    let stubs = expand::resource::items(resource, krate, body);
    let checks = (own.uri.is_some() != own.template.is_some())
        .then(|| expand::resource::not_variables(resource, krate));
    quote! {
        #stubs
        const _: () = { #checks };
    }
}

/// `server!` with mistakes: only the errors, the check of its name, and the named function
/// if one was asked for.
pub(crate) fn server(server: &crate::ast::ServerInput, errors: &Errors) -> TokenStream {
    let krate = &server.krate();
    let getter = server.getter.as_ref();
    let errors = errors.to_compile_errors();
    let name_check = expand::server_name_check(krate, server.name.as_ref());
    let getter = getter.map(|g| {
        let (vis, ident) = (&g.vis, &g.ident);
        // The slice too, so items attached to the server add no errors of their own.
        let slice = expand::slice_declaration(server, g, krate);
        quote! {
            #slice
            #[allow(dead_code)]
            #vis fn #ident() -> #krate::Server {
                ::core::unreachable!("this server failed to compile")
            }
        }
    });
    quote!(#errors #name_check #getter)
}
