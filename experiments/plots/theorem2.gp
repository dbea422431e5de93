# Theorem 2 of Bhojanapalli et al. (docs/theory/low-rank-bottleneck.md), tested numerically.
# g_V: FixedMultiHead, h heads of size d_p > d/h sharing K_i^T Q_i = U of rank
# d_p.  Three layers are fitted to g_V on m inputs at once (BFGS from random
# starts, then a Levenberg-Marquardt polish); the y axis is the relative
# error sqrt(sum_m ||f(X_m) - g_V(X_m)||^2 / sum_m ||g_V(X_m)||^2):
#   standard MultiHead (h heads of size d/h)   -- the theorem's subject,
#   FixedMultiHead (h heads of size d_p)        -- control, contains g_V,
#   standard, one head of size d                -- control with as many
#                                                  parameters as the first.
# Small points: every start; lines: the best start.  Errors below 1e-17 are
# drawn at the floor.
#   build/experiments/theorem2_demo --full --out docs/figures
# renders this script itself; by hand:
#   gnuplot -e "datadir='out/theorem2_demo'; outdir='docs/figures'; cd='4 6'; ch='2 3'; cn='6 8'; cdp='4 4'" experiments/plots/theorem2.gp
if (!exists("datadir")) datadir = 'out/theorem2_demo'
if (!exists("outdir")) outdir = 'docs/figures'
if (!exists("cd")) cd = '4'
if (!exists("ch")) ch = '2'
if (!exists("cn")) cn = '6'
if (!exists("cdp")) cdp = '4'
fits = datadir . '/theorem2.csv'
summary = datadir . '/theorem2_summary.csv'
set datafile separator ','
floor = 1e-17
atfloor(v) = v > floor ? v : floor
cf(i, k) = word(k == 1 ? cd : (k == 2 ? ch : (k == 3 ? cn : cdp)), i) + 0
isconf(i) = $1 == cf(i,1) && $2 == cf(i,2) && $3 == cf(i,3) && $4 == cf(i,4)
models = 'standard fixed standard-1head'
array titles[3] = ['standard MultiHead, %d heads of size %d', 'FixedMultiHead, %d heads of size %d (control)', 'standard, %d head of size %d (control, same parameters)']
array colours[3] = ['#cc2222', '#2255cc', '#22aa44']
nconf = words(cd)
do for [term in 'pngcairo svg'] {
  if (term eq 'pngcairo') {
    set terminal pngcairo size (700 * nconf + 100),640 enhanced font 'sans,11'
    set output outdir . '/theorem2.png'
  } else {
    set terminal svg size (700 * nconf + 100),640 enhanced font 'sans,11'
    set output outdir . '/theorem2.svg'
  }
  set multiplot layout 1,nconf
  do for [c=1:nconf] {
    set title sprintf('fitting g_V (d = %d, h = %d, n = %d, d_p = %d) on m inputs', cf(c,1), cf(c,2), cf(c,3), cf(c,4))
    set logscale y
    set format y '10^{%L}'
    set yrange [floor/3:3]
    set xrange [0.5:*]
    set xtics 1
    set xlabel 'inputs m fitted at once'
    set ylabel 'relative error of the fitted layer'
    set grid
    set key below left Left reverse font ',10' maxrows 3
    hs(k) = k == 3 ? 1 : cf(c,2)
    ps(k) = k == 1 ? cf(c,1) / cf(c,2) : (k == 2 ? cf(c,4) : cf(c,1))
    plot for [k=1:3] fits using ($9 + 0.08 * (k - 2)):(isconf(c) && strcol(5) eq word(models, k) ? atfloor($12) : NaN) \
           with points pt 7 ps 0.5 lc rgb colours[k] notitle, \
         for [k=1:3] summary using 9:(isconf(c) && strcol(5) eq word(models, k) ? atfloor($11) : NaN) \
           with linespoints lw 2 pt 5 ps 1 lc rgb colours[k] title sprintf(titles[k], hs(k), ps(k))
  }
  unset multiplot
  set output
}
