//! `#[mcp_resource]`: the function, unchanged, and the resource or template next to it, with
//! the constant checks of the parameters that are no template variable.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Path};

use super::{cfgs, hidden, item_struct, option_str, option_timeout, static_lifetimes};
use crate::ast::AnnotatedFn;
use crate::uri::template_variables;

/// The constant checks of the parameters named like no template variable (every parameter
/// of a fixed `uri`): each is refused unless its type is filled by the request (the
/// context), as its `ResourceParam::VARIABLE` says; the error is on the parameter.
pub(crate) fn not_variables(resource: &AnnotatedFn, krate: &Path) -> TokenStream {
    let own = &resource.attrs.resource;
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

/// The items standing for the resource: the struct, `profile::resource()` (or
/// `resource_template()`), and the `ResourceItem` impl whose build has the given body.
pub(crate) fn items(resource: &AnnotatedFn, krate: &Path, body: TokenStream) -> TokenStream {
    let own = &resource.attrs.resource;
    let ident = &resource.item.sig.ident;
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
    let what = if own.uri.is_some() {
        "resource"
    } else {
        "resource template"
    };
    let getter_fn = quote! {
        pub fn #getter() -> #ty {
            #body
        }
    };
    let standing = item_struct(resource, what, getter_fn, TokenStream::new());
    quote! {
        #standing

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
pub(crate) fn expand(resource: &AnnotatedFn) -> TokenStream {
    let krate = resource.krate();
    let start = hidden("__mcp_start");
    let request = hidden("__mcp_request");
    let values: Vec<Ident> = (0..resource.params.len())
        .map(|i| hidden(&format!("__mcp_arg{i}")))
        .collect();
    let reads = reads(resource, &krate, &request, &values);
    let read = read_call(resource, &krate, &request, &values);
    let meta = resource_meta(resource, &krate);
    let (cached, completers) = if resource.attrs.resource.uri.is_some() {
        (quote!(cached_resource), TokenStream::new())
    } else {
        let builder = hidden("__mcp_builder");
        let completers = super::completers(resource);
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
        #krate::__private::#cached(::core::any::TypeId::of::<Self>(), #meta, #start #completers)
    };
    let mut items = items(resource, &krate, body);
    items.extend(super::attachment(resource, &krate, "resource"));
    let checks = not_variables(resource, &krate);
    let cfgs = cfgs(resource);
    items.extend(quote! {
        #(#cfgs)*
        const _: () = { #checks };
    });
    super::with_function(resource, items)
}

/// Each parameter read from its template variable, parsed by its type's `ResourceParam`; a
/// value that does not parse ends the read before the function runs.
fn reads(
    resource: &AnnotatedFn,
    krate: &Path,
    request: &Ident,
    values: &[Ident],
) -> Vec<TokenStream> {
    resource
        .params
        .iter()
        .zip(values)
        .map(|(p, value)| {
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
        })
        .collect()
}

/// The metadata as a constant expression (`&ResourceMeta { .. }`, promoted to a `'static`).
fn resource_meta(resource: &AnnotatedFn, krate: &Path) -> TokenStream {
    let own = &resource.attrs.resource;
    let (name, _) = resource.name();
    let attr = |lit: &Option<LitStr>| option_str(lit.as_ref().map(LitStr::value).as_deref());
    let title = attr(&resource.attrs.title);
    let description = option_str(super::description(resource).as_deref());
    let mime_type = attr(&own.mime_type);
    let timeout = option_timeout(resource.attrs.timeout.as_ref());
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
    quote! {
        &#krate::__private::ResourceMeta {
            key: #key,
            name: #name,
            title: #title,
            description: #description,
            mime_type: #mime_type,
            size: #size,
            timeout: #timeout,
        }
    }
}

/// The call of the function as a `ResourceFuture`: boxed for an `async fn`, else run at once.
/// Spanned on the function's name; the output's conversion on the return type.
fn read_call(
    resource: &AnnotatedFn,
    krate: &Path,
    request: &Ident,
    values: &[Ident],
) -> TokenStream {
    let ident = &resource.item.sig.ident;
    let output = resource.output();
    let convert = quote_spanned! {output.span()=>
        <#output as #krate::IntoResourceContents>::into_read_result
    };
    if resource.item.sig.asyncness.is_some() {
        quote_spanned! {ident.span()=>
            ::std::boxed::Box::pin(#krate::__private::resource_async(#ident(#(#values),*), #request, #convert))
        }
    } else {
        quote_spanned!(ident.span()=> #krate::__private::resource_sync(#ident(#(#values),*), #request, #convert))
    }
}
