//! The integer dot products of the scoring pass (`semantic_rows.rs`): a
//! rounded goal against many int8 rows, by the fastest kernel the
//! processor has; every kernel gives the same exact sums.

#[cfg(test)]
use super::Query;

/// The integer dot products of a rounded goal with each row of `rows`
/// (int8 components as bytes, `query.len()` a row), into `out`, with the
/// fastest [`Kernel`] this processor has. The sums are exact integers, so
/// every kernel gives the same products.
pub(super) fn dots(query: &[i16], rows: &[u8], out: &mut Vec<i32>) {
    dots_with(Kernel::best(), query, rows, out);
}

/// The ways [`dots`] can run.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// The plain loop, vectorised by the compiler.
    Plain,
    /// On x86-64 an SSE2 kernel (three times the compiler's vectorisation
    /// of the plain loop, which spends most of its instructions widening
    /// bytes: 3.7 ms against 11 ms for 594,000 rows of 128 in a
    /// micro-benchmark, the same sums).
    Sse2,
    /// On x86-64 processors with AVX2: sixteen components widened by one
    /// instruction and multiplied in one (`vpmovsxbw`, `vpmaddwd`): under
    /// half the SSE2 kernel's instructions per row, and the pass is every
    /// chunk of the workspace on every query.
    Avx2,
    /// On x86-64 processors with AVX-512 (BW): thirty-two components a
    /// step, the same two instructions on twice the width, and four rows'
    /// lanes added together at once.
    Avx512,
}

impl Kernel {
    /// The fastest kernel this processor runs.
    fn best() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512bw") {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
            Kernel::Sse2
        }
        #[cfg(not(target_arch = "x86_64"))]
        Kernel::Plain
    }
}

/// [`dots`] with `kernel` (the plain loop when the processor lacks it, or
/// the goal's length is not a multiple of 16).
fn dots_with(kernel: Kernel, query: &[i16], rows: &[u8], out: &mut Vec<i32>) {
    out.clear();
    #[cfg(target_arch = "x86_64")]
    if query.len().is_multiple_of(16) && kernel != Kernel::Plain {
        let avx512 = kernel == Kernel::Avx512 && std::arch::is_x86_feature_detected!("avx512bw");
        let avx2 = matches!(kernel, Kernel::Avx2 | Kernel::Avx512)
            && std::arch::is_x86_feature_detected!("avx2");
        // SAFETY: `dots_sse2` only requires SSE2, which is part of the
        // x86-64 baseline: every x86-64 processor has it and the target
        // enables it. `dots_avx2` requires AVX2 and `dots_avx512` AVX-512
        // BW, each called only when the processor was just seen to have it.
        #[allow(unsafe_code)] // the crate's second unsafe site (store.rs has the first)
        unsafe {
            if avx512 {
                dots_avx512(query, rows, out);
            } else if avx2 {
                dots_avx2(query, rows, out);
            } else {
                dots_sse2(query, rows, out);
            }
        };
        return;
    }
    out.extend(
        rows.chunks_exact(query.len().max(1))
            .map(|r| dot_i8(query, r)),
    );
}

/// [`dots`] with AVX2 for the built-in model's 128 components
/// ([`dots_avx2_fixed`]); any other length goes to [`dots_sse2`] (the same
/// sums), since only the shipped model's rows are scored on every query.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(query: &[i16], rows: &[u8], out: &mut Vec<i32>) {
    if query.len() == 128 {
        // A fixed trip count the compiler unrolls, with no bounds check
        // per step.
        dots_avx2_fixed::<128>(query, rows, out);
    } else {
        dots_sse2(query, rows, out);
    }
}

/// [`dots`] with SSE2: sixteen components a step, the even and odd bytes
/// sign-extended in place within 16-bit lanes (two shifts and one; no
/// unpacking), each half multiplied with the goal's matching components
/// and summed pairwise into 32-bit lanes (`pmaddwd`). Loads go through
/// `from_le_bytes` (no pointer, no unsafe); the compiler makes them one
/// unaligned load.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn dots_sse2(query: &[i16], rows: &[u8], out: &mut Vec<i32>) {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_madd_epi16, _mm_set_epi16, _mm_set_epi64x,
        _mm_setzero_si128, _mm_shuffle_epi32, _mm_slli_epi16, _mm_srai_epi16,
    };
    let even: Vec<__m128i> = query
        .chunks_exact(16)
        .map(|b| _mm_set_epi16(b[14], b[12], b[10], b[8], b[6], b[4], b[2], b[0]))
        .collect();
    let odd: Vec<__m128i> = query
        .chunks_exact(16)
        .map(|b| _mm_set_epi16(b[15], b[13], b[11], b[9], b[7], b[5], b[3], b[1]))
        .collect();
    let word = |b: &[u8]| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    for row in rows.chunks_exact(query.len()) {
        let mut acc = _mm_setzero_si128();
        for ((c, &e), &o) in row.chunks_exact(16).zip(&even).zip(&odd) {
            let x = _mm_set_epi64x(word(&c[8..]), word(&c[..8]));
            let low = _mm_srai_epi16::<8>(_mm_slli_epi16::<8>(x));
            let high = _mm_srai_epi16::<8>(x);
            acc = _mm_add_epi32(acc, _mm_madd_epi16(low, e));
            acc = _mm_add_epi32(acc, _mm_madd_epi16(high, o));
        }
        let acc = _mm_add_epi32(acc, _mm_shuffle_epi32::<0b01_00_11_10>(acc));
        let acc = _mm_add_epi32(acc, _mm_shuffle_epi32::<0b10_11_00_01>(acc));
        out.push(_mm_cvtsi128_si32(acc));
    }
}

/// [`dots`] with AVX2 for rows of exactly `DIM` components (a multiple of
/// 16), unrolled: sixteen components a step, sign-extended to 16-bit lanes
/// in one instruction, multiplied with the goal's sixteen and summed
/// pairwise into eight 32-bit lanes (`vpmaddwd`); the lanes are added
/// together once per row. Loads go through `from_le_bytes`, as in
/// [`dots_sse2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2_fixed<const DIM: usize>(query: &[i16], rows: &[u8], out: &mut Vec<i32>) {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepi8_epi16,
        _mm256_extracti128_si256, _mm256_madd_epi16, _mm256_set_epi16, _mm256_setzero_si256,
        _mm_add_epi32, _mm_cvtsi128_si32, _mm_set_epi64x, _mm_shuffle_epi32,
    };
    let goal: Vec<__m256i> = query
        .chunks_exact(16)
        .map(|b| {
            _mm256_set_epi16(
                b[15], b[14], b[13], b[12], b[11], b[10], b[9], b[8], b[7], b[6], b[5], b[4], b[3],
                b[2], b[1], b[0],
            )
        })
        .collect();
    let Some(goal) = goal.get(..DIM / 16) else {
        return;
    };
    let word = |b: &[u8]| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    for row in rows.chunks_exact(DIM) {
        let Ok(row) = <&[u8; DIM]>::try_from(row) else {
            continue;
        };
        let mut acc = _mm256_setzero_si256();
        for (k, &g) in goal.iter().enumerate() {
            let c = &row[16 * k..16 * k + 16];
            let x = _mm256_cvtepi8_epi16(_mm_set_epi64x(word(&c[8..]), word(&c[..8])));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, g));
        }
        let acc = _mm_add_epi32(
            _mm256_castsi256_si128(acc),
            _mm256_extracti128_si256::<1>(acc),
        );
        let acc = _mm_add_epi32(acc, _mm_shuffle_epi32::<0b01_00_11_10>(acc));
        let acc = _mm_add_epi32(acc, _mm_shuffle_epi32::<0b10_11_00_01>(acc));
        out.push(_mm_cvtsi128_si32(acc));
    }
}

/// [`dots`] with AVX-512 for the built-in model's 128 components
/// ([`dots_avx512_fixed`]); any other length goes to [`dots_avx2`] (the
/// same sums).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
fn dots_avx512(query: &[i16], rows: &[u8], out: &mut Vec<i32>) {
    if query.len() == 128 {
        dots_avx512_fixed::<128>(query, rows, out);
    } else {
        dots_avx2(query, rows, out);
    }
}

/// [`dots`] with AVX-512 for rows of exactly `DIM` components (a multiple
/// of 32): [`dots_avx2_fixed`]'s steps on thirty-two components
/// (`vpmovsxbw`, `vpmaddwd` on 512 bits), four rows at a time, whose
/// sixteen lanes each are added together in one tree (each row's lanes
/// were a fifth of the AVX2 kernel's instructions); the last rows one by
/// one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
fn dots_avx512_fixed<const DIM: usize>(query: &[i16], rows: &[u8], out: &mut Vec<i32>) {
    use std::arch::x86_64::{
        __m512i, _mm256_set_epi64x, _mm512_add_epi32, _mm512_castsi512_si128, _mm512_cvtepi8_epi16,
        _mm512_madd_epi16, _mm512_reduce_add_epi32, _mm512_set_epi64, _mm512_setzero_si512,
        _mm512_shuffle_i64x2, _mm512_unpackhi_epi32, _mm512_unpackhi_epi64, _mm512_unpacklo_epi32,
        _mm512_unpacklo_epi64, _mm_cvtsi128_si32, _mm_extract_epi32,
    };
    // Four components in one 64-bit word, the first lowest.
    let pack = |b: &[i16]| (0..4).fold(0i64, |w, i| w | (i64::from(b[i] as u16) << (16 * i)));
    let goal: Vec<__m512i> = query
        .chunks_exact(32)
        .map(|b| {
            _mm512_set_epi64(
                pack(&b[28..]),
                pack(&b[24..]),
                pack(&b[20..]),
                pack(&b[16..]),
                pack(&b[12..]),
                pack(&b[8..]),
                pack(&b[4..]),
                pack(&b[..4]),
            )
        })
        .collect();
    let Some(goal) = goal.get(..DIM / 32) else {
        return;
    };
    let word = |b: &[u8]| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let row_lanes = |row: &[u8]| {
        let mut acc = _mm512_setzero_si512();
        for (k, &g) in goal.iter().enumerate() {
            let c = &row[32 * k..32 * k + 32];
            let x = _mm256_set_epi64x(word(&c[24..]), word(&c[16..]), word(&c[8..]), word(c));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_cvtepi8_epi16(x), g));
        }
        acc
    };
    let mut quads = rows.chunks_exact(4 * DIM);
    for quad in &mut quads {
        let (a, b, c, d) = (
            row_lanes(&quad[..DIM]),
            row_lanes(&quad[DIM..2 * DIM]),
            row_lanes(&quad[2 * DIM..3 * DIM]),
            row_lanes(&quad[3 * DIM..]),
        );
        // Lanes (a0 b0 a1 b1 …) then (a0+a1 b0+b1 c0+c1 d0+d1 …): each
        // 128-bit part holds the four rows' partial sums in order.
        let ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
        let cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
        let abcd = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
        // The four 128-bit parts added: the rows' sums, in order.
        let halves = _mm512_add_epi32(abcd, _mm512_shuffle_i64x2::<0b01_00_11_10>(abcd, abcd));
        let sums = _mm512_add_epi32(
            halves,
            _mm512_shuffle_i64x2::<0b10_11_00_01>(halves, halves),
        );
        let sums = _mm512_castsi512_si128(sums);
        out.extend([
            _mm_cvtsi128_si32(sums),
            _mm_extract_epi32::<1>(sums),
            _mm_extract_epi32::<2>(sums),
            _mm_extract_epi32::<3>(sums),
        ]);
    }
    for row in quads.remainder().chunks_exact(DIM) {
        out.push(_mm512_reduce_add_epi32(row_lanes(row)));
    }
}

/// The integer dot product of a rounded goal and an int8 row (its bytes).
/// Written as a plain zip-sum so the compiler vectorises it; the goal's
/// rounding ([`Query::new`]) keeps the `i32` sum from overflowing.
#[inline]
fn dot_i8(query: &[i16], row: &[u8]) -> i32 {
    query
        .iter()
        .zip(row)
        .map(|(&q, &r)| i32::from(q) * i32::from(r as i8))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX-512, AVX2 and SSE2 kernels and the plain loop give the same
    /// sums, extremes included (the goal's largest magnitude against -127
    /// and 127), for the model's length (the unrolled kernels; 302 rows,
    /// so AVX-512's four-row steps leave two rows over), another multiple
    /// of 16 (their loop) and a length no kernel takes. AVX-512 and AVX2
    /// are checked where the processor has them (each falls back to the
    /// next kernel elsewhere, which the comparison then also holds).
    #[test]
    fn the_kernel_and_the_plain_loop_agree() {
        for dim in [128, 48, 20] {
            let query = Query::new(
                &(0..dim)
                    .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
                    .collect::<Vec<_>>(),
            );
            let rows: Vec<u8> = (0..dim * 302usize)
                .map(|i| match i % 7 {
                    0 => 127u8,
                    1 => (-127i8) as u8,
                    _ => (i.wrapping_mul(2_654_435_761) >> 9) as u8,
                })
                .collect();
            let plain: Vec<i32> = rows
                .chunks_exact(dim)
                .map(|r| dot_i8(&query.q, r))
                .collect();
            assert_eq!(plain.len(), 302);
            for kernel in [
                Kernel::best(),
                Kernel::Plain,
                Kernel::Sse2,
                Kernel::Avx2,
                Kernel::Avx512,
            ] {
                let mut out = Vec::new();
                dots_with(kernel, &query.q, &rows, &mut out);
                assert_eq!(out, plain, "{kernel:?}, {dim} components");
            }
        }
    }
}
