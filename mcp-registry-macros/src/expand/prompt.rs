//! `#[mcp_prompt]`: the function, unchanged, and the prompt next to it.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Path, Type};

use super::{PROMPT, hidden, items, option_str, option_timeout, param_docs, static_lifetimes};
use crate::ast::AnnotatedFn;

/// `#[mcp_prompt]`: the function, unchanged, and the prompt next to it.
pub(crate) fn expand(prompt: &AnnotatedFn) -> TokenStream {
    let krate = prompt.krate();
    let start = hidden("__mcp_start");
    let values: Vec<Ident> = (0..prompt.params.len())
        .map(|i| hidden(&format!("__mcp_arg{i}")))
        .collect();
    let plain: Vec<Type> = prompt
        .params
        .iter()
        .map(|p| static_lifetimes(&p.ty))
        .collect();
    let types = super::checked_types(prompt, quote!(#krate::prompt::param::PromptParamType));
    let docs = param_docs(prompt);
    let meta = prompt_meta(prompt, &krate);
    let render = render_call(prompt, &krate, &values);
    let completers = super::completers(prompt);
    let builder = hidden("__mcp_builder");
    let signature = hidden(&format!("prompt_signature{}", prompt.params.len()));
    let body = quote! {
        fn #start(#(#values: #plain),*) -> #krate::prompt::PromptFuture {
            #render
        }
        #krate::__private::cached_prompt(
            ::core::any::TypeId::of::<Self>(),
            #meta,
            #krate::__private::#signature::<#(#types),*>(&#krate::__private::PromptParams::<(#(#plain,)*)> {
                start: #start,
                docs: [#(#docs),*],
            }),
            |#builder: #krate::PromptBuilder| #builder #(#completers)*,
        )
    };
    let mut items = items(prompt, &PROMPT, &krate, body);
    items.extend(super::attachment(prompt, &krate, "prompt"));
    super::with_function(prompt, items)
}

/// The metadata as a constant expression (`&PromptMeta { .. }`, promoted to a `'static`).
fn prompt_meta(prompt: &AnnotatedFn, krate: &Path) -> TokenStream {
    let (name, _) = prompt.name();
    let title = option_str(
        prompt
            .attrs
            .title
            .as_ref()
            .map(syn::LitStr::value)
            .as_deref(),
    );
    let description = option_str(super::description(prompt).as_deref());
    let timeout = option_timeout(prompt.attrs.timeout.as_ref());
    quote! {
        &#krate::__private::PromptMeta {
            name: #name,
            title: #title,
            description: #description,
            timeout: #timeout,
        }
    }
}

/// The call of the function as a `PromptFuture`: boxed for an `async fn`, else run at once.
/// Spanned on the function's name; the output's conversion on the return type.
fn render_call(prompt: &AnnotatedFn, krate: &Path, values: &[Ident]) -> TokenStream {
    let ident = &prompt.item.sig.ident;
    let output = prompt.output();
    let convert = quote_spanned! {output.span()=>
        <#output as #krate::IntoPromptResult>::into_prompt_result
    };
    if prompt.item.sig.asyncness.is_some() {
        quote_spanned! {ident.span()=>
            ::std::boxed::Box::pin(#krate::__private::prompt_async(#ident(#(#values),*), #convert))
        }
    } else {
        quote_spanned!(ident.span()=> #krate::__private::prompt_sync(#ident(#(#values),*), #convert))
    }
}
