//! Elixir: `defmodule` (nested too), `defimpl` and their `def`/`defp`
//! functions; a function's clauses are one definition with the `@doc`
//! and `@spec` above them; remote calls resolve to the module's file;
//! `alias`, `import` and `require` are imports.

use super::{assert_symbol, chunks, symbol_ids, Indexed};

const INVOICE: &str = include_str!("fixtures/elixir/lib/billing/invoice.ex");
const TAX_TABLE: &str = include_str!("fixtures/elixir/lib/billing/tax_table.ex");

const PATH: &str = "lib/billing/invoice.ex";

#[test]
fn elixir_symbols_have_their_names_and_lines() {
    let c = chunks(PATH, INVOICE);
    assert_symbol(&c, "Billing.Invoice", "Invoice", "module", (1, 49));
    // Both clauses of add_item/4, with the @doc and @spec above the first.
    assert_symbol(
        &c,
        "Billing.Invoice.add_item",
        "add_item",
        "function",
        (14, 23),
    );
    assert!(
        !symbol_ids(&c).contains(&"Billing.Invoice.add_item~2"),
        "{:?}",
        symbol_ids(&c)
    );
    assert_symbol(
        &c,
        "Billing.Invoice.describe",
        "describe",
        "function",
        (34, 34),
    );
    assert_symbol(
        &c,
        "Billing.Invoice.round_cents",
        "round_cents",
        "function",
        (44, 44),
    );
    assert_symbol(&c, "Billing.Invoice.Sink", "Sink", "module", (46, 48));
    // Named as the module it compiles to, protocol and type.
    assert_symbol(
        &c,
        "String.Chars.Billing.Invoice",
        "Invoice",
        "impl",
        (51, 53),
    );
    assert_symbol(
        &c,
        "String.Chars.Billing.Invoice.to_string",
        "to_string",
        "function",
        (52, 52),
    );
}

#[test]
fn clauses_of_different_functions_stay_apart() {
    let text = "defmodule M do\n  def a(0), do: 0\n  def a(n), do: n\n  def b(x), do: a(x)\n  def a(:late), do: 1\nend\n";
    let c = chunks("lib/m.ex", text);
    // `a`'s clauses are one, `b` is its own, and a clause of `a` after
    // `b` (a compiler warning in Elixir) starts a definition again.
    assert_eq!(symbol_ids(&c), ["M", "M.a", "M.b", "M.a~2"]);
    assert_symbol(&c, "M.a", "a", "function", (2, 3));
}

#[test]
fn elixir_definitions_calls_and_aliases_resolve() {
    let ix = Indexed::new(&[(PATH, INVOICE), ("lib/billing/tax_table.ex", TAX_TABLE)]);
    assert_eq!(
        ix.defined("add_item"),
        ["lib/billing/invoice.ex#Billing.Invoice.add_item"]
    );
    assert_eq!(
        ix.call(PATH, "Billing.Invoice.total", "tax_on").as_deref(),
        Some("lib/billing/tax_table.ex#Billing.TaxTable.tax_on")
    );
    assert_eq!(
        ix.call(PATH, "Billing.Invoice.from_order", "add_item")
            .as_deref(),
        Some("lib/billing/invoice.ex#Billing.Invoice.add_item")
    );
    assert_eq!(
        ix.import(PATH, "Billing.TaxTable").as_deref(),
        Some("lib/billing/tax_table.ex")
    );
    assert_eq!(ix.import(PATH, "Billing.Format"), None);
    assert_eq!(ix.import(PATH, "Logger"), None);
}
