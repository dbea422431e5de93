# Standard MultiHead (head size d/h) against FixedMultiHead (head size n)
# over the head count h, at n tokens and embedding sizes d1, d2.
# The x axis of (a)-(c) is h n / d: the paper's bottleneck condition h > d/n
# is x > 1 and the standard head size is d/h = n / x, so both embedding
# sizes fall on the same curves (drawn with different points to show it).
#  (a) per-head logit rank bound min(d_p, d, n) against the n - 1 needed;
#  (b) fraction of random / structured targets one head represents exactly;
#  (c) mean KL(P || softmax) of the best single head (fit or certificate);
#  (d) attention parameters per layer (with biases) against h.
# Values below 1e-17 (exact zeros, round-off) are drawn at the floor.
#   build/experiments/heads_sweep --full --out docs/figures
# renders this script itself; by hand:
#   gnuplot -e "datadir='out/heads_sweep'; outdir='docs/figures'; n=128; d1=256; d2=512" experiments/plots/heads_sweep.gp
if (!exists("datadir")) datadir = 'out/heads_sweep'
if (!exists("outdir")) outdir = 'docs/figures'
if (!exists("n")) n = 128
if (!exists("d1")) d1 = 256
if (!exists("d2")) d2 = 512
data = datadir . '/heads_sweep.csv'
set datafile separator ','
floor = 1e-17
atfloor(v) = v > floor ? v : floor
is(kind, d, fam) = strcol(4) eq kind && $1 == d && strcol(12) eq fam
x(h, d) = h * n / d
families = 'dirichlet near-permutation banded local-smooth lowrank-n/8'
do for [term in 'pngcairo svg'] {
  if (term eq 'pngcairo') {
    set terminal pngcairo size 1400,1000 enhanced font 'sans,11'
    set output outdir . '/heads_sweep.png'
  } else {
    set terminal svg size 1400,1000 enhanced font 'sans,11'
    set output outdir . '/heads_sweep.svg'
  }
  set multiplot layout 2,2
  set grid
  set logscale x 2
  set format x '%g'
  set xrange [x(0.7, d2):x(90, d1)]
  set xlabel 'h n / d   (paper: bottleneck for h > d/n, i.e. > 1)'
  set arrow 1 from 1, graph 0 to 1, graph 1 nohead lw 2 dt 2 lc rgb '#aa0000'
  # (a)
  set title sprintf('(a) per-head logit rank bound, n = %d', n)
  set logscale y 2
  set format y '%g'
  set yrange [0.7:2*n]
  set ylabel 'min(d_p, d, n)'
  set key bottom left opaque box
  plot n - 1 with lines lw 3 lc rgb '#222222' title sprintf('needed for every P: n - 1 = %d', n - 1), \
       data using (x($3,$1)):(is('standard', d1, 'dirichlet') ? $6 : NaN) with linespoints lw 2 pt 7 ps 1.2 title sprintf('standard d_p = d/h, d = %d', d1), \
       data using (x($3,$1)):(is('standard', d2, 'dirichlet') ? $6 : NaN) with linespoints lw 2 pt 6 ps 2 title sprintf('standard, d = %d', d2), \
       data using (x($3,$1)):(is('fixed', d1, 'dirichlet') ? $6 : NaN) with linespoints lw 2 pt 5 title sprintf('fixed d_p = n, d = %d and %d', d1, d2)
  # (b)
  set title '(b) targets one head represents exactly (standard layer)'
  unset logscale y
  set yrange [-0.05:1.05]
  set ylabel 'fraction with rank({/Symbol P} log P) <= rank bound'
  set key bottom left opaque box
  plot for [f in families] data using (x($3,$1)):(is('standard', d1, f) ? $14 : NaN) with linespoints lw 2 pt 7 title f, \
       data using (x($3,$1)):(is('fixed', d1, 'dirichlet') ? $14 : NaN) with lines lw 3 dt 2 lc rgb '#444444' title 'fixed d_p = n (every family)'
  # (c)
  set title '(c) error of the best single head (standard layer unless marked)'
  set logscale y
  set format y '10^{%L}'
  set yrange [floor/3:1]
  set ylabel 'mean KL(P || softmax(rank-bounded logits))'
  set key at graph 0.02, graph 0.82 left top opaque box font ',9'
  plot for [f in families] data using (x($3,$1)):(is('standard', d1, f) ? atfloor($18) : NaN) with linespoints lw 2 pt 7 title f, \
       for [f in families] data using (x($3,$1)):(is('standard', d2, f) ? atfloor($18) : NaN) with points pt 6 ps 2 lc rgb '#888888' notitle, \
       data using (x($3,$1)):(is('fixed', d1, 'dirichlet') ? atfloor($18) : NaN) with linespoints lw 3 dt 2 lc rgb '#444444' title 'fixed d_p = n'
  unset arrow 1
  # (d)
  set title '(d) attention parameters per layer (with biases)'
  set xrange [0.7:90]
  set xlabel 'heads h'
  set format y '10^{%L}'
  set yrange [*:*]
  set ylabel 'parameters'
  set key top left opaque box
  plot data using 3:(is('standard', d1, 'dirichlet') ? $11 : NaN) with linespoints lw 2 pt 7 title sprintf('standard, d = %d', d1), \
       data using 3:(is('standard', d2, 'dirichlet') ? $11 : NaN) with linespoints lw 2 pt 7 title sprintf('standard, d = %d', d2), \
       data using 3:(is('fixed', d1, 'dirichlet') ? $11 : NaN) with linespoints lw 2 pt 5 title sprintf('fixed d_p = n, d = %d', d1), \
       data using 3:(is('fixed', d2, 'dirichlet') ? $11 : NaN) with linespoints lw 2 pt 5 title sprintf('fixed d_p = n, d = %d', d2)
  unset multiplot
  set output
}
