//! One global budget, split across providers without waste.
//!
//! The protocol's budget unit is the budget token (B3: `ceil(bytes / 4)` of
//! content), which every party can recompute; a model's context window is
//! counted in model tokens. A host states its budget in either unit and the
//! conversion, with its safety factor, is explicit ([`Budget`]).
//!
//! Splitting is weighted max-min fairness ("water-filling", [`water_fill`]):
//! every provider gets at most what it can use, and what one cannot use flows
//! to the others, so the shares never sum above the budget and never leave
//! budget idle while someone still wants it. A host uses [`plan_shares`]
//! before querying (to set each provider's `max_tokens`), and the composer
//! runs [`water_fill`] again at composition time against what each provider
//! actually returned.

use contextgraph_types::{budget_tokens_for_model_tokens, DEFAULT_SAFETY_FACTOR};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// The budget of one whole composed prompt.
///
/// JSON: `{"unit":"budget_tokens","tokens":6000}` or
/// `{"unit":"model_tokens","tokens":8000,"safety_factor":1.35}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "unit", rename_all = "snake_case")]
pub enum Budget {
    /// Budget tokens (B3), used as given.
    BudgetTokens {
        /// The budget.
        tokens: u32,
    },
    /// Model tokens, converted to budget tokens as
    /// `floor(tokens / safety_factor)` by
    /// [`budget_tokens_for_model_tokens`] (a factor that is not a finite
    /// number ≥ 1 falls back to [`DEFAULT_SAFETY_FACTOR`]).
    ModelTokens {
        /// The model-token budget.
        tokens: u32,
        /// Model tokens assumed per budget token (1.35 is the common suggestion).
        safety_factor: f64,
    },
}

impl Budget {
    /// A budget of `tokens` budget tokens.
    pub fn budget_tokens(tokens: u32) -> Self {
        Budget::BudgetTokens { tokens }
    }

    /// A budget of `tokens` model tokens with the default safety factor (1.35).
    pub fn model_tokens(tokens: u32) -> Self {
        Budget::ModelTokens {
            tokens,
            safety_factor: DEFAULT_SAFETY_FACTOR,
        }
    }

    /// A budget of `tokens` model tokens with an explicit safety factor.
    pub fn model_tokens_with_factor(tokens: u32, safety_factor: f64) -> Self {
        Budget::ModelTokens {
            tokens,
            safety_factor,
        }
    }

    /// The budget in budget tokens, the unit everything is packed in.
    pub fn in_budget_tokens(&self) -> u32 {
        match *self {
            Budget::BudgetTokens { tokens } => tokens,
            Budget::ModelTokens {
                tokens,
                safety_factor,
            } => budget_tokens_for_model_tokens(tokens, safety_factor),
        }
    }
}

/// One claimant on a shared budget: how much it counts (`weight`) and how
/// much it could use at most (`demand`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Claim {
    /// Relative weight; a claimant of weight 0 gets nothing from the split.
    pub weight: u32,
    /// The most this claimant can use (e.g. Σ cost of its candidate frames).
    pub demand: u64,
}

/// Weighted max-min fair split of `total` among `claims` (water-filling).
///
/// Guarantees, for the returned `shares` (same order as `claims`):
/// - `Σ shares ≤ total`, and `shares[i] ≤ claims[i].demand`;
/// - nothing is wasted: if the positive-weight claimants together demand
///   at least `total`, the shares sum to exactly `total`, otherwise each of
///   them gets its whole demand;
/// - a claimant that wants less than its weighted portion gets exactly what
///   it wants, and the rest is split among the others by weight.
///
/// Rounding is by largest remainder with ties to the earlier claim, so the
/// result is a pure function of the input: callers pass claims in a
/// canonical order (the composer uses provider-id order). `O(n log n)`.
pub fn water_fill(total: u32, claims: &[Claim]) -> Vec<u32> {
    let mut shares = vec![0u32; claims.len()];
    // Claimants still to serve, cheapest demand-per-weight first: the ones
    // whose whole demand fits their portion are served first and leave.
    let mut open: Vec<usize> = (0..claims.len())
        .filter(|&i| claims[i].weight > 0 && claims[i].demand > 0)
        .collect();
    open.sort_by(|&a, &b| demand_per_weight_cmp(&claims[a], &claims[b]).then(a.cmp(&b)));
    let mut remaining = u64::from(total);
    let mut weight_left: u64 = open.iter().map(|&i| u64::from(claims[i].weight)).sum();
    let mut next = 0;
    while next < open.len() {
        let i = open[next];
        let claim = claims[i];
        // demand / weight <= remaining / weight_left, in integers (u128: no overflow).
        let fits = u128::from(claim.demand) * u128::from(weight_left)
            <= u128::from(remaining) * u128::from(claim.weight);
        if !fits {
            break;
        }
        // demand <= remaining here, because weight <= weight_left; so it fits a u32.
        shares[i] = u32::try_from(claim.demand).unwrap_or(u32::MAX);
        remaining -= claim.demand;
        weight_left -= u64::from(claim.weight);
        next += 1;
    }
    let rest = &open[next..];
    if rest.is_empty() || weight_left == 0 {
        return shares;
    }
    // Nobody left can be fully served: split what remains by weight.
    let mut handed_out = 0u64;
    let mut remainders: Vec<(u64, usize)> = Vec::with_capacity(rest.len());
    for &i in rest {
        let exact = u128::from(remaining) * u128::from(claims[i].weight);
        let floor = (exact / u128::from(weight_left)) as u64;
        let remainder = (exact % u128::from(weight_left)) as u64;
        shares[i] = u32::try_from(floor).unwrap_or(u32::MAX);
        handed_out += floor;
        remainders.push((remainder, i));
    }
    // Largest remainder first, ties to the earlier claim.
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let leftover = remaining - handed_out; // < rest.len()
    for &(_, i) in remainders.iter().take(leftover as usize) {
        // Each of these had floor < demand, so +1 still respects its demand.
        shares[i] += 1;
    }
    shares
}

/// `a.demand / a.weight` against `b.demand / b.weight`, exactly.
fn demand_per_weight_cmp(a: &Claim, b: &Claim) -> Ordering {
    (u128::from(a.demand) * u128::from(b.weight))
        .cmp(&(u128::from(b.demand) * u128::from(a.weight)))
}

/// Split `total` by `weights` before querying, e.g. to set each provider's
/// `max_tokens`: the shares sum to exactly `total` (when any weight is
/// positive) and are proportional to the weights up to rounding (largest
/// remainder, ties to the earlier entry).
///
/// Budget a provider then leaves unused is not lost: the composer
/// redistributes it at composition time ([`water_fill`] against actual
/// demand, then a global pass over the leftovers).
pub fn plan_shares(total: u32, weights: &[u32]) -> Vec<u32> {
    let claims: Vec<Claim> = weights
        .iter()
        .map(|&weight| Claim {
            weight,
            demand: u64::MAX,
        })
        .collect();
    water_fill(total, &claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_tokens_convert_with_the_safety_factor() {
        assert_eq!(Budget::model_tokens(1350).in_budget_tokens(), 1000);
        assert_eq!(
            Budget::model_tokens_with_factor(2000, 2.0).in_budget_tokens(),
            1000
        );
        assert_eq!(Budget::budget_tokens(77).in_budget_tokens(), 77);
    }

    #[test]
    fn a_small_claim_is_served_whole_and_the_rest_flows_on() {
        let claims = [
            Claim {
                weight: 1,
                demand: 10,
            },
            Claim {
                weight: 1,
                demand: 1000,
            },
        ];
        assert_eq!(water_fill(100, &claims), vec![10, 90]);
    }

    #[test]
    fn weighted_rounding_is_largest_remainder() {
        assert_eq!(plan_shares(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(plan_shares(10, &[1, 2, 0]), vec![3, 7, 0]);
        assert_eq!(plan_shares(0, &[1, 2]), vec![0, 0]);
        assert_eq!(plan_shares(10, &[0, 0]), vec![0, 0]);
    }
}
