//! `#[mcp_prompt]`: the same reading of a function as `#[mcp_tool]` (`ast::ToolFn`, with the
//! prompt's attributes), then its own checks, generation and fallback, kept apart.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Pat, ReturnType, Type};

use crate::ast::ToolFn;
use crate::ctxt::Errors;
use crate::expand::{MAX_PARAMS, PROMPT, hidden, items, option_str, param_docs, static_lifetimes};

// ---------------------------------------------------------------------------------------------
// Checks.

/// Checks a prompt function: free, not generic, safe, plain named parameters (at most
/// [`MAX_PARAMS`]) with distinct names, a nameable return type, its `# Arguments` docs.
/// (Its parameter types are checked through `PromptParam`, its name in constant evaluation.)
pub(crate) fn check(prompt: &ToolFn, errors: &mut Errors) {
    let sig = &prompt.item.sig;
    if let Some(receiver) = &prompt.receiver {
        errors.spanned(
            receiver,
            "#[mcp_prompt] cannot take `self`: a prompt is a free function; move it out of the impl block",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "#[mcp_prompt] functions cannot be generic: their arguments must be known when the prompt is defined",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.spanned(
            unsafety,
            "#[mcp_prompt] functions cannot be `unsafe`: a client calls them with any arguments",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "#[mcp_prompt] functions cannot be variadic");
    }
    if sig.asyncness.is_none()
        && let ReturnType::Type(_, ty) = &sig.output
        && let Some(span) = crate::valid::impl_trait_in(ty)
    {
        errors.at(
            span,
            "#[mcp_prompt] needs a nameable return type; return a concrete type, or make the function `async`",
        );
    }
    if let Some(extra) = prompt.params.get(MAX_PARAMS) {
        errors.spanned(
            &extra.pat,
            format_args!("#[mcp_prompt] functions take at most {MAX_PARAMS} parameters"),
        );
    }
    let mut names = std::collections::HashSet::new();
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
            let span = param
                .attrs
                .rename
                .as_ref()
                .map_or_else(|| param.pat.to_token_stream(), ToTokens::to_token_stream);
            errors.spanned(span, format_args!("two arguments are named `{name}`"));
        }
    }
    crate::valid::check_argument_docs(prompt, errors);
}

// ---------------------------------------------------------------------------------------------
// Generation.

/// `#[mcp_prompt]`: the function, unchanged, and the prompt next to it.
pub(crate) fn expand(prompt: &ToolFn) -> TokenStream {
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
    let types: Vec<TokenStream> = prompt
        .params
        .iter()
        .map(|p| {
            let ty = &p.ty;
            let mut tokens = ty.to_token_stream().into_iter();
            let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
            let last = tokens.last().map_or(first, |t| t.span());
            let open = quote_spanned!(first=> <);
            let close = quote_spanned!(last=> as #krate::prompt::param::PromptParamType>::Checked);
            quote!(#open #ty #close)
        })
        .collect();
    let docs = param_docs(prompt);
    let (name, _) = prompt.tool_name();
    let title = option_str(
        prompt
            .attrs
            .title
            .as_ref()
            .map(syn::LitStr::value)
            .as_deref(),
    );
    let description = prompt
        .attrs
        .description
        .as_ref()
        .map(syn::LitStr::value)
        .or_else(|| prompt.docs.description.clone());
    let description = option_str(description.as_deref());
    let timeout = crate::expand::option_timeout(prompt.attrs.timeout.as_ref());
    let ident = &prompt.item.sig.ident;
    let output = prompt.output();
    let convert = quote_spanned! {output.span()=>
        <#output as #krate::IntoPromptResult>::into_prompt_result
    };
    let render = if prompt.item.sig.asyncness.is_some() {
        quote_spanned! {ident.span()=>
            ::std::boxed::Box::pin(#krate::__private::prompt_async(#ident(#(#values),*), #convert))
        }
    } else {
        quote_spanned!(ident.span()=> #krate::__private::prompt_sync(#ident(#(#values),*), #convert))
    };
    let completers = prompt.params.iter().filter_map(|p| {
        let path = p.attrs.complete.as_ref()?;
        let name = p.property()?;
        Some(quote_spanned!(path.span()=> .complete(#name, #path)))
    });
    let builder = hidden("__mcp_builder");
    let signature = hidden(&format!("prompt_signature{}", prompt.params.len()));
    let body = quote! {
        fn #start(#(#values: #plain),*) -> #krate::prompt::PromptFuture {
            #render
        }
        #krate::__private::cached_prompt(
            ::core::any::TypeId::of::<Self>(),
            &#krate::__private::PromptMeta {
                name: #name,
                title: #title,
                description: #description,
                timeout: #timeout,
            },
            #krate::__private::#signature::<#(#types),*>(&#krate::__private::PromptParams::<(#(#plain,)*)> {
                start: #start,
                docs: [#(#docs),*],
            }),
            |#builder: #krate::PromptBuilder| #builder #(#completers)*,
        )
    };
    let mut items = items(prompt, &PROMPT, &krate, body);
    items.extend(crate::expand::attachment(prompt, &krate, "prompt"));
    let item = &prompt.item;
    match &prompt.original {
        Some(original) => quote!(#original #items),
        None => quote!(#item #items),
    }
}

// ---------------------------------------------------------------------------------------------
// Fallback.

/// `#[mcp_prompt]` on a function with mistakes: the function, the errors, and stand-ins for
/// the generated items.
pub(crate) fn fallback(prompt: &ToolFn, errors: &Errors) -> TokenStream {
    let item = &prompt.item;
    let errors = errors.to_compile_errors();
    if prompt.receiver.is_some() {
        return quote!(#errors #item);
    }
    let krate = prompt.krate();
    let stubs = items(
        prompt,
        &PROMPT,
        &krate,
        quote!(::core::unreachable!("this prompt failed to compile")),
    );
    quote! {
        #errors
        #item
        #stubs
    }
}
