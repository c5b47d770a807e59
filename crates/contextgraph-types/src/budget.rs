//! Budget tokens (B3) and the model-token conversion.
//!
//! A budget token is an accounting unit, not a tokenizer: exactly
//! `ceil(utf8_bytes / 4)` of the inline content. Every party can recompute it
//! from the bytes, which is what makes a cost claim checkable. A host that
//! budgets in model tokens converts with a safety factor, because real
//! tokenizers produce more tokens than bytes/4 on code and non-English text.

/// The commonly suggested model-tokens-per-budget-token safety factor.
pub const DEFAULT_SAFETY_FACTOR: f64 = 1.35;

/// B3: the cost of content of `len` UTF-8 bytes, `ceil(len / 4)`, saturating
/// at `u32::MAX` (content that large could never fit a `u32` budget anyway).
pub fn token_cost_of_len(len: usize) -> u32 {
    let tokens = len.div_ceil(4);
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// B3: the cost of an optional inline content (0 when absent).
pub fn token_cost_for(content: Option<&str>) -> u32 {
    content.map_or(0, |c| token_cost_of_len(c.len()))
}

/// How many budget tokens fit in `model_tokens` model tokens with `safety_factor`
/// model tokens assumed per budget token: `floor(model_tokens / factor)`.
///
/// The factor is used to a thousandth (1.35 is 1350/1000) and the division is
/// done in integers, so the answer is exact and the same on every machine
/// (floating point makes 1350 / 1.35 come out as 999.999…). A factor that is
/// not a finite number ≥ 1 is replaced by [`DEFAULT_SAFETY_FACTOR`]: a factor
/// below 1 would promise more content than the model budget holds.
pub fn budget_tokens_for_model_tokens(model_tokens: u32, safety_factor: f64) -> u32 {
    let milli = factor_in_thousandths(safety_factor);
    // milli >= 1000, so the quotient is at most model_tokens.
    (u64::from(model_tokens) * 1000 / milli) as u32
}

/// The model tokens `budget_tokens` may occupy: `ceil(budget_tokens * factor)`,
/// saturating at `u32::MAX`.
pub fn model_tokens_for_budget_tokens(budget_tokens: u32, safety_factor: f64) -> u32 {
    let milli = factor_in_thousandths(safety_factor);
    let model = (u64::from(budget_tokens) * milli).div_ceil(1000);
    u32::try_from(model).unwrap_or(u32::MAX)
}

/// The safety factor in thousandths, at least 1000.
fn factor_in_thousandths(factor: f64) -> u64 {
    let factor = if factor.is_finite() && factor >= 1.0 {
        factor
    } else {
        DEFAULT_SAFETY_FACTOR
    };
    // Clamp before the cast: a factor of 1e300 would otherwise saturate oddly.
    (factor.min(1.0e6) * 1000.0).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_cost_is_ceil_of_bytes_over_four() {
        assert_eq!(token_cost_for(None), 0);
        assert_eq!(token_cost_for(Some("")), 0);
        assert_eq!(token_cost_for(Some("a")), 1);
        assert_eq!(token_cost_for(Some("abcd")), 1);
        assert_eq!(token_cost_for(Some("abcde")), 2);
        // Bytes, not characters: "é" is two bytes, "日本" six.
        assert_eq!(token_cost_for(Some("éé")), 1);
        assert_eq!(token_cost_for(Some("日本")), 2);
    }

    #[test]
    fn model_budget_converts_with_the_safety_factor() {
        assert_eq!(budget_tokens_for_model_tokens(1350, 1.35), 1000);
        assert_eq!(budget_tokens_for_model_tokens(1000, 1.35), 740);
        assert_eq!(model_tokens_for_budget_tokens(740, 1.35), 999);
        assert_eq!(model_tokens_for_budget_tokens(1000, 1.35), 1350);
        // Nonsense factors fall back to the default rather than over-promising.
        assert_eq!(budget_tokens_for_model_tokens(1350, 0.5), 1000);
        assert_eq!(budget_tokens_for_model_tokens(1350, f64::NAN), 1000);
        assert_eq!(model_tokens_for_budget_tokens(u32::MAX, 2.0), u32::MAX);
        // The conversion never hands out more model tokens than it was given.
        for m in [0u32, 1, 7, 100, 8000, 128_000] {
            let b = budget_tokens_for_model_tokens(m, DEFAULT_SAFETY_FACTOR);
            assert!(
                model_tokens_for_budget_tokens(b, DEFAULT_SAFETY_FACTOR) <= m,
                "{m}"
            );
        }
    }
}
