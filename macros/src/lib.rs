//! `#[braid::test]`: an `async fn` test whose body braid runs as the root task of a simulation,
//! over many schedules. Use it through `braid::test`; the settings are documented there.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{parse_macro_input, Error, ItemFn, LitFloat, LitInt, LitStr, ReturnType};

/// See `braid::test`.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut settings = Settings::default();
    let parser = syn::meta::parser(|meta| settings.parse(meta));
    if let Err(e) = parser.parse(args) {
        return e.to_compile_error().into();
    }
    let function = parse_macro_input!(item as ItemFn);
    match expand(settings, function) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The attribute's settings, each turned into a call on the `braid::Check` builder.
#[derive(Default)]
struct Settings {
    calls: Vec<Tokens>,
    strategy: Option<(String, Span)>,
    depth: Option<LitInt>,
    preemption_bound: Option<LitInt>,
}

impl Settings {
    fn parse(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match key.as_str() {
            "runs" | "seed" | "max_steps" | "clock_jumps" => {
                let value: LitInt = meta.value()?.parse()?;
                let name = syn::Ident::new(&key, Span::call_site());
                self.calls.push(quote!(.#name(#value)));
            }
            "time" => {
                // Seconds, a whole or a decimal number.
                let value: syn::Lit = meta.value()?.parse()?;
                let secs = match value {
                    syn::Lit::Int(i) => i.base10_parse::<f64>()?,
                    syn::Lit::Float(f) => f.base10_parse::<f64>()?,
                    other => return Err(Error::new(other.span(), "time is in seconds: `time = 2` or `time = 0.5`")),
                };
                if !(secs.is_finite() && secs > 0.0) {
                    return Err(meta.error("time must be more than 0 seconds"));
                }
                let secs = LitFloat::new(&format!("{secs:?}f64"), Span::call_site());
                self.calls
                    .push(quote!(.time(::std::time::Duration::from_secs_f64(#secs))));
            }
            "strategy" => {
                let value: LitStr = meta.value()?.parse()?;
                let name = value.value();
                if !["default", "random", "pct", "portfolio", "dfs"].contains(&name.as_str()) {
                    return Err(Error::new(
                        value.span(),
                        format!("unknown strategy `{name}`: one of default, random, pct, portfolio, dfs"),
                    ));
                }
                self.strategy = Some((name, value.span()));
            }
            "depth" => self.depth = Some(meta.value()?.parse()?),
            "preemption_bound" => self.preemption_bound = Some(meta.value()?.parse()?),
            "out" | "regressions" => {
                let value: LitStr = meta.value()?.parse()?;
                let name = syn::Ident::new(&key, Span::call_site());
                // Relative paths are the test crate's (its manifest directory), as cargo runs tests.
                self.calls.push(quote!(.#name(::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(#value))));
            }
            _ => {
                return Err(meta.error(
                    "unknown setting: one of runs, time, seed, max_steps, strategy, depth, preemption_bound, out, regressions",
                ))
            }
        }
        Ok(())
    }

    fn strategy_call(&self) -> syn::Result<Option<Tokens>> {
        let (name, span) = match &self.strategy {
            Some((name, span)) => (name.as_str(), *span),
            None => ("default", Span::call_site()),
        };
        if let (Some(depth), false) = (&self.depth, name == "pct") {
            return Err(Error::new(
                depth.span(),
                "depth applies to strategy = \"pct\"",
            ));
        }
        if let (Some(bound), false) = (&self.preemption_bound, name == "dfs") {
            return Err(Error::new(
                bound.span(),
                "preemption_bound applies to strategy = \"dfs\"",
            ));
        }
        let call = match name {
            "default" if self.strategy.is_none() => return Ok(None),
            "default" => quote!(::braid::Strategy::Default),
            "random" => quote!(::braid::Strategy::Random),
            "portfolio" => quote!(::braid::Strategy::Portfolio),
            "pct" => {
                let depth = self.depth.clone().unwrap_or_else(|| LitInt::new("3", span));
                quote!(::braid::Strategy::Pct { depth: #depth })
            }
            "dfs" => {
                let bound = match &self.preemption_bound {
                    Some(b) => quote!(::core::option::Option::Some(#b)),
                    None => quote!(::core::option::Option::None),
                };
                quote!(::braid::Strategy::dfs(#bound))
            }
            _ => unreachable!("checked when parsed"),
        };
        Ok(Some(quote!(.strategy(#call))))
    }
}

fn expand(settings: Settings, function: ItemFn) -> syn::Result<Tokens> {
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = function;
    if sig.asyncness.is_none() {
        return Err(Error::new_spanned(
            sig.fn_token,
            "#[braid::test] goes on an `async fn`",
        ));
    }
    if !sig.inputs.is_empty() {
        return Err(Error::new_spanned(
            &sig.inputs,
            "a #[braid::test] takes no arguments",
        ));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        return Err(Error::new_spanned(
            ty,
            "a #[braid::test] returns `()`: fail it with a panic or `assert!`",
        ));
    }
    if !sig.generics.params.is_empty() {
        return Err(Error::new_spanned(
            &sig.generics,
            "a #[braid::test] is not generic",
        ));
    }
    let name = &sig.ident;
    let mut calls = settings.calls.clone();
    if let Some(strategy) = settings.strategy_call()? {
        calls.push(strategy);
    }
    Ok(quote! {
        #[::core::prelude::v1::test]
        #(#attrs)*
        #vis fn #name() {
            ::braid::__private::run_test(
                ::braid::__private::TestInfo {
                    path: ::std::string::String::from(::core::concat!(::core::module_path!(), "::", ::core::stringify!(#name))),
                    file: ::core::file!(),
                    package: ::core::env!("CARGO_PKG_NAME"),
                    crate_name: ::core::env!("CARGO_CRATE_NAME"),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                },
                ::braid::check(|| async move #block) #(#calls)*,
            )
        }
    })
}
