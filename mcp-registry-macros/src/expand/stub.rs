//! `add::call(&caller, a, b)`: the typed call stub of a `#[mcp_tool]` function.
//!
//! One associated function per tool, in the impl block of its `tool()` getter, which hands
//! the arguments to the runtime crate's `CallStub::call_stub` (compiled once per signature,
//! not per tool). Its only bound sits on the caller's type, so a tool whose arguments are not `Serialize`, or
//! whose return type cannot be read back, still compiles: only a call of its stub is an error.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, Path};

use super::{hidden, static_lifetimes};
use crate::ast::AnnotatedFn;

/// `pub fn call(..)`, for the tool's `impl add { .. }` block.
pub(crate) fn stub(tool: &AnnotatedFn, krate: &Path) -> TokenStream {
    stub_named(tool, krate, &Ident::new("call", Span::call_site()))
}

/// The stub as `pub fn #ident(..)`: `call` for a free function's tool, `call_add` for the
/// method `add` of an `#[mcp_server]` (in the struct's own impl block).
pub(crate) fn stub_named(tool: &AnnotatedFn, krate: &Path, ident: &Ident) -> TokenStream {
    let caller = hidden("__McpCaller");
    let receiver = hidden("caller");
    let lifetime = syn::Lifetime::new("'__mcp_caller", Span::mixed_site());
    let (mut names, mut values, mut types) = (Vec::new(), Vec::new(), Vec::new());
    for (i, param) in tool
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_provided())
    {
        names.push(param.property().unwrap_or_default());
        values.push(
            param
                .ident
                .clone()
                .unwrap_or_else(|| hidden(&format!("__mcp_arg{i}"))),
        );
        types.push(static_lifetimes(&param.ty));
    }
    let output = static_lifetimes(&tool.output());
    let (name, _) = tool.name();
    let stub = quote!(#krate::tool::stub::CallStub<(#(#types,)*), #output>);
    let doc = format!(
        "Calls the tool `{name}` through `caller` (a `Registry`, a connected `client::Client`, \
         any `ToolCaller`): the arguments sent as JSON, the result read back as this \
         function's return type says (`tool::stub`)."
    );
    let values: Vec<&Ident> = values.iter().collect();
    quote! {
        #[doc = #doc]
        #[allow(dead_code, clippy::too_many_arguments, clippy::type_complexity)]
        pub fn #ident<#lifetime, #caller>(
            #receiver: &#lifetime #caller,
            #(#values: #types),*
        ) -> #krate::tool::stub::StubFuture<#lifetime, #caller, (#(#types,)*), #output>
        where
            #caller: #stub + ?::core::marker::Sized,
        {
            <#caller as #stub>::call_stub(#receiver, #name, &[#(#names),*], (#(#values,)*))
        }
    }
}
