//! Typed views of the macros' input: the annotated function and the `server!` arguments.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{
    Expr, ExprLit, FnArg, Ident, ItemFn, Lit, LitBool, LitStr, Pat, Path, ReturnType, Token, Type,
    Visibility,
};

use crate::attr::{self, Docs, ItemAttrs, ParamAttrs};
use crate::ctxt::Errors;
use crate::kind::Kind;

/// The function under `#[mcp_tool]`, `#[mcp_prompt]` or `#[mcp_resource]`.
pub(crate) struct AnnotatedFn {
    pub(crate) kind: Kind,
    /// The user's function as it is emitted: unchanged but for our `#[arg]` attributes.
    pub(crate) item: ItemFn,
    pub(crate) attrs: ItemAttrs,
    pub(crate) docs: Docs,
    pub(crate) params: Vec<Param>,
    /// The `self` receiver, if there is one (refused).
    pub(crate) receiver: Option<syn::Receiver>,
    /// Whether `item` differs from the input (our `#[arg]` attributes were taken out).
    pub(crate) edited: bool,
    /// The function's tokens as they came, to emit instead of `item` when not `edited`.
    pub(crate) original: Option<TokenStream>,
}

/// Parses a function without parsing its body: the body is kept as tokens (a verbatim
/// statement), which the macro never looks into and emits as it came. Much cheaper than
/// `syn::ItemFn`'s full parse for a long body.
pub(crate) fn parse_fn(input: ParseStream) -> syn::Result<ItemFn> {
    let attrs = input.call(syn::Attribute::parse_outer)?;
    let vis: Visibility = input.parse()?;
    let sig: syn::Signature = input.parse()?;
    let content;
    let brace_token = syn::braced!(content in input);
    let body: TokenStream = content.parse()?;
    Ok(ItemFn {
        attrs,
        vis,
        sig,
        block: Box::new(syn::Block {
            brace_token,
            stmts: vec![syn::Stmt::Item(syn::Item::Verbatim(body))],
        }),
    })
}

/// One parameter of the function.
pub(crate) struct Param {
    pub(crate) pat: Pat,
    pub(crate) ty: Type,
    /// The binding's name (`None` for a pattern that is not a plain name).
    pub(crate) ident: Option<Ident>,
    pub(crate) attrs: ParamAttrs,
}

impl Param {
    /// Whether the call provides the parameter rather than the client, by how its type is
    /// written: a path ending in `ToolContext` or `Caller` (`ToolContext`,
    /// `mcp_registry::Caller`, `::mcp_registry::tool::ToolContext`), or in `State<..>` (host
    /// state), also when a `macro_rules!` passed it as a `$ty` or it is in parentheses. What
    /// a typed call stub leaves out (`expand::stub`): the stub's parameters are fixed here,
    /// before any type is known. The tool itself reads every parameter through `ToolParam`,
    /// which sees through aliases too; a provided parameter written through an alias stays in
    /// the stub, where it cannot be sent.
    pub(crate) fn is_provided(&self) -> bool {
        let mut ty = &self.ty;
        loop {
            ty = match ty {
                Type::Group(group) => &group.elem,
                Type::Paren(paren) => &paren.elem,
                Type::Path(path) => {
                    return path.qself.is_none()
                        && path.path.segments.last().is_some_and(|last| {
                            let bare = last.arguments.is_empty();
                            (bare && (last.ident == "ToolContext" || last.ident == "Caller"))
                                || (!bare && last.ident == "State")
                        });
                }
                _ => return false,
            }
        }
    }

    /// The argument's property name: `#[arg(rename)]`, else the binding without `r#`.
    pub(crate) fn property(&self) -> Option<String> {
        match &self.attrs.rename {
            Some(r) => Some(r.value()),
            None => self.ident.as_ref().map(|i| i.unraw().to_string()),
        }
    }
}

impl AnnotatedFn {
    /// Reads the function and its attributes (`args`, inside the attribute of `kind`),
    /// collecting every mistake in `errors`.
    pub(crate) fn from_syn(
        kind: Kind,
        args: TokenStream,
        mut item: ItemFn,
        errors: &mut Errors,
    ) -> AnnotatedFn {
        let attrs = attr::parse_attrs(kind, args, errors);
        let docs = attr::parse_docs(&item.attrs, errors);
        let mut params = Vec::new();
        let mut receiver = None;
        let mut edited = false;
        for input in &mut item.sig.inputs {
            match input {
                FnArg::Receiver(r) => receiver = Some(r.clone()),
                FnArg::Typed(pt) => {
                    let attrs = attr::parse_param_attrs(&pt.attrs, errors);
                    let before = pt.attrs.len();
                    pt.attrs.retain(|a| !attr::is_param_attr(a));
                    edited |= pt.attrs.len() != before;
                    let ident = match &*pt.pat {
                        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                            Some(pi.ident.clone())
                        }
                        _ => None,
                    };
                    params.push(Param {
                        pat: (*pt.pat).clone(),
                        ty: (*pt.ty).clone(),
                        ident,
                        attrs,
                    });
                }
            }
        }
        AnnotatedFn {
            kind,
            item,
            attrs,
            docs,
            params,
            receiver,
            edited,
            original: None,
        }
    }

    /// The item's name: `name = "..."`, else the function's name without `r#`.
    pub(crate) fn name(&self) -> (String, Span) {
        match &self.attrs.name {
            Some(n) => (n.value(), n.span()),
            None => (
                self.item.sig.ident.unraw().to_string(),
                self.item.sig.ident.span(),
            ),
        }
    }

    /// The type the function returns (after `.await` for an `async fn`).
    pub(crate) fn output(&self) -> Type {
        match &self.item.sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        }
    }

    /// The path of the runtime crate in generated code.
    pub(crate) fn krate(&self) -> Path {
        self.attrs.krate.clone().unwrap_or_else(default_crate)
    }
}

fn default_crate() -> Path {
    syn::parse_quote!(::mcp_registry)
}

/// `fn = [vis] ident`: the function `server!` defines to hand out its `Server`.
pub(crate) struct Getter {
    pub(crate) vis: Visibility,
    pub(crate) ident: Ident,
}

/// The arguments of `server!`.
pub(crate) struct ServerInput {
    pub(crate) name: Option<LitStr>,
    pub(crate) version: Option<Expr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) instructions: Option<LitStr>,
    pub(crate) tools: Option<Vec<Path>>,
    pub(crate) prompts: Option<Vec<Path>>,
    pub(crate) resources: Option<Vec<Path>>,
    pub(crate) getter: Option<Getter>,
    pub(crate) collect: Option<LitBool>,
    pub(crate) krate: Option<Path>,
    /// A hash of the invocation and the crate's name: the program-wide unique name of the
    /// server's distributed slice (linker sections are named after it).
    pub(crate) seed: u64,
    /// Mistakes that do not stop parsing (unknown, repeated or ill-typed keys).
    pub(crate) errors: Errors,
}

const SERVER_KEYS: &str = "`name`, `version`, `title`, `instructions`, `tools`, `prompts`, `resources`, `fn`, `collect`, `crate`";

fn lit_str(value: Expr, key: &str, errors: &mut Errors) -> Option<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        other => {
            errors.spanned(
                other,
                format_args!("`{key}` takes a string literal: `{key} = \"...\"`"),
            );
            None
        }
    }
}

impl Parse for ServerInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut out = ServerInput {
            name: None,
            version: None,
            title: None,
            instructions: None,
            tools: None,
            prompts: None,
            resources: None,
            getter: None,
            collect: None,
            krate: None,
            seed: 0,
            errors: Errors::default(),
        };
        let mut seen: Vec<String> = Vec::new();
        while !input.is_empty() {
            let (key, span) = parse_key(input)?;
            input.parse::<Token![=]>()?;
            // A repeated key is reported here; its value is parsed, and the first one stands.
            let repeated = seen.contains(&key);
            if repeated {
                out.errors
                    .at(span, format_args!("duplicate attribute `{key}`"));
            }
            seen.push(key.clone());
            out.parse_value(input, &key, span, repeated)?;
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(out)
    }
}

/// A `server!` key: an identifier, or `fn`.
fn parse_key(input: ParseStream) -> syn::Result<(String, Span)> {
    if input.peek(Token![fn]) {
        let f: Token![fn] = input.parse()?;
        Ok(("fn".to_owned(), f.span))
    } else {
        let ident = Ident::parse_any(input)?;
        Ok((ident.to_string(), ident.span()))
    }
}

impl ServerInput {
    /// The value after `key =`: a list of tool, prompt or resource paths, a function to define, or an expression.
    fn parse_value(
        &mut self,
        input: ParseStream,
        key: &str,
        span: Span,
        repeated: bool,
    ) -> syn::Result<()> {
        match key {
            "tools" | "prompts" | "resources" => {
                let content;
                syn::bracketed!(content in input);
                let paths = Punctuated::<Path, Token![,]>::parse_terminated(&content)?;
                if !repeated {
                    let paths = Some(paths.into_iter().collect());
                    match key {
                        "tools" => self.tools = paths,
                        "prompts" => self.prompts = paths,
                        _ => self.resources = paths,
                    }
                }
            }
            "fn" => {
                let vis: Visibility = input.parse()?;
                let ident: Ident = input.parse()?;
                if !repeated {
                    self.getter = Some(Getter { vis, ident });
                }
            }
            _ => {
                let value: Expr = input.parse()?;
                if !repeated {
                    self.set(key, span, value);
                }
            }
        }
        Ok(())
    }

    /// Records `key = value` for the keys whose value is an expression.
    fn set(&mut self, key: &str, span: Span, value: Expr) {
        match key {
            "name" => self.name = lit_str(value, key, &mut self.errors),
            "version" => self.version = Some(value),
            "title" => self.title = lit_str(value, key, &mut self.errors),
            "instructions" => self.instructions = lit_str(value, key, &mut self.errors),
            "collect" => match value {
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }) => self.collect = Some(b),
                other => self
                    .errors
                    .spanned(other, "`collect` takes `true` or `false`"),
            },
            "crate" => self.krate = attr::crate_path(&value, &mut self.errors),
            _ => self.errors.at(
                span,
                format_args!("unknown attribute `{key}`; server! takes {SERVER_KEYS}"),
            ),
        }
    }
}

impl ServerInput {
    pub(crate) fn krate(&self) -> Path {
        self.krate.clone().unwrap_or_else(default_crate)
    }

    /// The server's `name`, empty when it has none (a mistake reported elsewhere).
    pub(crate) fn name_value(&self) -> String {
        self.name.as_ref().map(LitStr::value).unwrap_or_default()
    }
}

/// The name under which a server's distributed slice is reached from the module of its
/// `fn = ident`: `server = a::math` means `a::__mcp_attached_math` (spanned on the user's
/// identifier, so a misspelled server is reported there).
pub(crate) fn attached_ident(ident: &Ident) -> Ident {
    Ident::new(&format!("__mcp_attached_{}", ident.unraw()), ident.span())
}

/// FNV-1a, for names that must not collide.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
