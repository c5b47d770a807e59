//! C#: a file-scoped `namespace X;` qualifies the declarations after it as
//! a braced namespace does; constructors, methods, records and interface
//! members are symbols; `new T(…)` calls `T`; `using` directives are
//! imports (C# names namespaces, not files: they resolve to none).

use super::{assert_symbol, chunks, symbol_ids, Indexed};

const INVOICE: &str = include_str!("fixtures/csharp/src/Billing/Invoice.cs");
const TAX_TABLE: &str = include_str!("fixtures/csharp/src/Billing/Taxes/TaxTable.cs");

#[test]
fn csharp_symbols_are_qualified_by_a_file_scoped_namespace() {
    let c = chunks("src/Billing/Invoice.cs", INVOICE);
    assert_symbol(&c, "Billing.Invoice", "Invoice", "class", (8, 49));
    assert_symbol(
        &c,
        "Billing.Invoice.Invoice",
        "Invoice",
        "constructor",
        (14, 18),
    );
    assert_symbol(&c, "Billing.Invoice.AddItem", "AddItem", "method", (22, 31));
    assert_symbol(&c, "Billing.LineItem", "LineItem", "record", (51, 51));
    assert_symbol(&c, "Billing.IInvoiceSink.Send", "Send", "method", (55, 55));
    // The braced form names them the same.
    let braced = INVOICE.replace("namespace Billing;", "namespace Billing {") + "}\n";
    let b = chunks("src/Billing/Invoice.cs", &braced);
    for id in ["Billing.Invoice.AddItem", "Billing.LineItem"] {
        assert!(symbol_ids(&b).contains(&id), "{id}: {:?}", symbol_ids(&b));
    }
}

#[test]
fn csharp_definitions_calls_and_usings_are_found() {
    let ix = Indexed::new(&[
        ("src/Billing/Invoice.cs", INVOICE),
        ("src/Billing/Taxes/TaxTable.cs", TAX_TABLE),
    ]);
    assert_eq!(
        ix.defined("TaxOn"),
        ["src/Billing/Taxes/TaxTable.cs#Billing.Taxes.TaxTable.TaxOn"]
    );
    let from = "src/Billing/Invoice.cs";
    assert_eq!(
        ix.call(from, "Billing.Invoice.Total", "TaxOn").as_deref(),
        Some("src/Billing/Taxes/TaxTable.cs#Billing.Taxes.TaxTable.TaxOn")
    );
    assert_eq!(
        ix.call(from, "Billing.Invoice.FromOrder", "AddItem")
            .as_deref(),
        Some("src/Billing/Invoice.cs#Billing.Invoice.AddItem")
    );
    // `new LineItem(…)` calls the record it constructs.
    assert_eq!(
        ix.call(from, "Billing.Invoice.AddItem", "LineItem")
            .as_deref(),
        Some("src/Billing/Invoice.cs#Billing.LineItem")
    );
    assert_eq!(ix.import(from, "Billing.Taxes"), None);
    assert_eq!(ix.import(from, "System.Collections.Generic"), None);
}
