//! What a macro emits when the input has mistakes: the user's function unchanged, the errors,
//! and stand-ins for the generated items, so that code naming them (`server!`, `add::tool()`)
//! does not add errors of its own. One mistake, one message.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::ToolFn;
use crate::ctxt::Errors;
use crate::expand;

/// `#[mcp_tool]` on a function with mistakes.
pub(crate) fn tool(tool: &ToolFn, errors: &Errors) -> TokenStream {
    let item = &tool.item;
    let errors = errors.to_compile_errors();
    // A function with a receiver sits in an impl block, where no struct can be declared.
    if tool.receiver.is_some() {
        return quote!(#errors #item);
    }
    let krate = tool.krate();
    let stubs = expand::items(
        tool,
        &expand::TOOL,
        &krate,
        quote!(::core::unreachable!("this tool failed to compile")),
    );
    quote! {
        #errors
        #item
        #stubs
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
