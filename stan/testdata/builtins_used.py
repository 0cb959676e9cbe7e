#!/usr/bin/env python3
"""List the built-in functions the posteriordb Stan programs call.

Usage: python3 stan/testdata/builtins_used.py ../shared/data/posteriordb-full/models/*.stan \
         > stan/testdata/builtins_used.txt

Per program: identifiers followed by '(' minus keywords and the program's own functions; for
`~ name(` the name_lupdf (or _lupmf for a discrete family); for T[ the name_lcdf/_lccdf.
Output: count (programs using it) and name, most used first.
"""
import re, sys, collections

KEYWORDS = set("""for while if else return print reject fatal_error target in int real vector
row_vector matrix array void data lower upper offset multiplier simplex ordered positive_ordered
unit_vector cholesky_factor_corr cholesky_factor_cov corr_matrix cov_matrix T break continue
profile""".split())
DISCRETE = set("""poisson poisson_log poisson_log_glm binomial binomial_logit bernoulli
bernoulli_logit bernoulli_logit_glm neg_binomial neg_binomial_2 neg_binomial_2_log
neg_binomial_2_log_glm categorical categorical_logit multinomial multinomial_logit
ordered_logistic ordered_probit hypergeometric beta_binomial discrete_range
poisson_binomial""".split())

def strip_comments(s):
    s = re.sub(r'/\*.*?\*/', ' ', s, flags=re.S)
    s = re.sub(r'//[^\n]*', '', s)
    s = re.sub(r'#[^\n]*', '', s)
    s = re.sub(r'"[^"\n]*"', '""', s)
    return s

def suffix(name):
    return '_lupmf' if name in DISCRETE else '_lupdf'

counts = collections.Counter()
for path in sys.argv[1:]:
    src = strip_comments(open(path).read())
    user = set(re.findall(r'\b(?:real|int|vector|row_vector|matrix|void|array\s*\[[ ,]*\]\s*\w+)\s+(\w+)\s*\(', src))
    used = set()
    for m in re.finditer(r'\b([A-Za-z_]\w*)\s*\(', src):
        n = m.group(1)
        if n in KEYWORDS or n in user:
            continue
        if src[:m.start()].rstrip().endswith('~'):
            n = n + suffix(n)
        used.add(n)
    for m in re.finditer(r'~\s*([A-Za-z_]\w*)\s*\([^;]*?\)\s*T\s*\[([^\]]*)\]', src, flags=re.S):
        n, bounds = m.group(1), m.group(2)
        lo, _, hi = bounds.partition(',')
        if lo.strip():
            used.add(n + '_lccdf')
        if hi.strip():
            used.add(n + '_lcdf')
    # base names of user functions that are used with ~ (user _lpdf) are not built-ins
    used = {u for u in used if not any(u.startswith(f.rsplit('_', 1)[0] + '_') and f.endswith(('_lpdf', '_lpmf')) for f in user)}
    counts.update(used)

print("# made by: python3 stan/testdata/builtins_used.py ../shared/data/posteriordb-full/models/*.stan > stan/testdata/builtins_used.txt")
print("# count (programs using it) and name; operators are not listed (see lib_operator.go)")
for n, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
    print(c, n)
