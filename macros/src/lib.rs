//! `#[braid::test]`: an `async fn` test whose body braid runs as the root task of a simulation,
//! over many schedules. Use it through `braid::test`; the settings are documented there.
//!
//! `tokio_test` and `tokio_main` are `#[tokio::test]` and `#[tokio::main]` under `--cfg madsim`,
//! re-exported by `braid-tokio` as `test` and `main`: the same expansion, reached through the
//! user's `tokio` dependency (`::tokio::__braid`), tokio's own arguments accepted.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{parse_macro_input, Error, ItemFn, LitFloat, LitInt, LitStr, ReturnType};

/// See `braid::test`.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    attribute(Settings::new(Flavour::Braid), args, item)
}

/// `#[tokio::test]` under `--cfg madsim` (re-exported by `braid-tokio` as `test`): a braid
/// exploration of the test, as `#[braid::test]`. tokio's `flavor`, `worker_threads` and
/// `start_paused` are accepted and ignored (a braid run is one thread in virtual time, and
/// explores the interleavings a multi-threaded runtime can produce); `crate = "name"` names
/// the dependency when it is not called `tokio`; `#[braid::test]`'s settings are accepted too.
/// The test may return `Result<(), E>`: an `Err` fails the run.
#[proc_macro_attribute]
pub fn tokio_test(args: TokenStream, item: TokenStream) -> TokenStream {
    attribute(Settings::new(Flavour::TokioTest), args, item)
}

/// `#[tokio::main]` under `--cfg madsim` (re-exported by `braid-tokio` as `main`): the body
/// runs once as the main task of one braid run (see `braid::__private::run_main`), so that a
/// binary builds, and runs, under the facade. tokio's arguments are accepted and ignored.
#[proc_macro_attribute]
pub fn tokio_main(args: TokenStream, item: TokenStream) -> TokenStream {
    attribute(Settings::new(Flavour::TokioMain), args, item)
}

fn attribute(mut settings: Settings, args: TokenStream, item: TokenStream) -> TokenStream {
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

/// Which attribute is expanding.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Flavour {
    #[default]
    Braid,
    TokioTest,
    TokioMain,
}

impl Flavour {
    fn name(self) -> &'static str {
        match self {
            Flavour::Braid => "#[braid::test]",
            Flavour::TokioTest => "#[tokio::test]",
            Flavour::TokioMain => "#[tokio::main]",
        }
    }
}

/// The attribute's settings, each turned into a call on the `braid::Check` builder.
#[derive(Default)]
struct Settings {
    flavour: Flavour,
    calls: Vec<Tokens>,
    strategy: Option<(String, Span)>,
    depth: Option<LitInt>,
    preemption_bound: Option<LitInt>,
    /// The path to braid from the test's crate: `::braid`, or `::tokio::__braid` through
    /// `braid-tokio` (`crate = "..."` renames `tokio`).
    root: Option<Tokens>,
}

impl Settings {
    fn new(flavour: Flavour) -> Settings {
        Settings {
            flavour,
            ..Settings::default()
        }
    }

    fn root(&self) -> Tokens {
        match (&self.root, self.flavour) {
            (Some(root), _) => root.clone(),
            (None, Flavour::Braid) => quote!(::braid),
            (None, _) => quote!(::tokio::__braid),
        }
    }

    fn parse(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match key.as_str() {
            "runs" | "seed" | "max_steps" | "clock_jumps" | "crashes" | "network_faults" => {
                let value: LitInt = meta.value()?.parse()?;
                let name = syn::Ident::new(&key, Span::call_site());
                self.calls.push(quote!(.#name(#value)));
            }
            // A flag: the test shares state braid does not see (see `Check::plain_state`).
            "plain_state" if self.flavour == Flavour::Braid => self.calls.push(quote!(.plain_state())),
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
                if !["default", "random", "pct", "portfolio", "pos", "dfs"].contains(&name.as_str()) {
                    return Err(Error::new(
                        value.span(),
                        format!("unknown strategy `{name}`: one of default, random, pct, portfolio, pos, dfs"),
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
            // tokio's own arguments: accepted, and meaningless under braid (one thread, virtual
            // time, every interleaving a multi-threaded runtime could produce explored).
            "flavor" | "worker_threads" | "start_paused" | "unhandled_panic"
                if self.flavour != Flavour::Braid =>
            {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            "crate" if self.flavour != Flavour::Braid => {
                let value: LitStr = meta.value()?.parse()?;
                let name: syn::Path = value.parse()?;
                self.root = Some(quote!(#name::__braid));
            }
            _ if self.flavour == Flavour::TokioMain => {
                return Err(meta.error(
                    "unknown argument: #[tokio::main] under braid takes tokio's flavor, worker_threads, start_paused and crate",
                ))
            }
            _ => {
                return Err(meta.error(
                    "unknown setting: one of runs, time, seed, max_steps, strategy, depth, preemption_bound, out, regressions, crashes, network_faults, clock_jumps, plain_state",
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
        let root = self.root();
        let call = match name {
            "default" if self.strategy.is_none() => return Ok(None),
            "default" => quote!(#root::Strategy::Default),
            "random" => quote!(#root::Strategy::Random),
            "portfolio" => quote!(#root::Strategy::Portfolio),
            "pos" => quote!(#root::Strategy::Pos),
            "pct" => {
                let depth = self.depth.clone().unwrap_or_else(|| LitInt::new("3", span));
                quote!(#root::Strategy::Pct { depth: #depth })
            }
            "dfs" => {
                let bound = match &self.preemption_bound {
                    Some(b) => quote!(::core::option::Option::Some(#b)),
                    None => quote!(::core::option::Option::None),
                };
                quote!(#root::Strategy::dfs(#bound))
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
    let what = settings.flavour.name();
    if sig.asyncness.is_none() {
        return Err(Error::new_spanned(
            sig.fn_token,
            format!("{what} goes on an `async fn`"),
        ));
    }
    if !sig.inputs.is_empty() {
        return Err(Error::new_spanned(
            &sig.inputs,
            format!("a {what} takes no arguments"),
        ));
    }
    // `#[braid::test]` returns `()`; tokio's attributes also allow a `Result<(), E>`.
    let body = match (&sig.output, settings.flavour) {
        (ReturnType::Type(_, ty), Flavour::Braid) => {
            return Err(Error::new_spanned(
                ty,
                "a #[braid::test] returns `()`: fail it with a panic or `assert!`",
            ));
        }
        (ReturnType::Type(_, ty), _) => {
            let root = settings.root();
            quote!(async move {
                let output: #ty = async move #block.await;
                #root::__private::TestOutput::check(output)
            })
        }
        (ReturnType::Default, _) => quote!(async move #block),
    };
    if !sig.generics.params.is_empty() {
        return Err(Error::new_spanned(
            &sig.generics,
            format!("a {what} is not generic"),
        ));
    }
    let name = &sig.ident;
    let root = settings.root();
    let info = quote! {
        #root::__private::TestInfo {
            path: ::std::string::String::from(::core::concat!(::core::module_path!(), "::", ::core::stringify!(#name))),
            file: ::core::file!(),
            package: ::core::env!("CARGO_PKG_NAME"),
            crate_name: ::core::env!("CARGO_CRATE_NAME"),
            manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
        }
    };
    if settings.flavour == Flavour::TokioMain {
        return Ok(quote! {
            #(#attrs)*
            #vis fn #name() {
                #root::__private::run_main(#info, || #body)
            }
        });
    }
    let mut calls = settings.calls.clone();
    // tokio code commonly shares std's locks and atomics between its tasks, which braid does
    // not see: a `#[tokio::test]` is searched without reduction (`Check::plain_state`).
    if settings.flavour == Flavour::TokioTest {
        calls.push(quote!(.plain_state()));
    }
    if let Some(strategy) = settings.strategy_call()? {
        calls.push(strategy);
    }
    Ok(quote! {
        #[::core::prelude::v1::test]
        #(#attrs)*
        #vis fn #name() {
            #root::__private::run_test(
                #info,
                #root::check(|| #body) #(#calls)*,
            )
        }
    })
}
