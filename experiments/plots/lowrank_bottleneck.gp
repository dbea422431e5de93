# Low-rank bottleneck of one attention head (docs/theory/low-rank-bottleneck.md).
#  (a) random Dirichlet targets: relative logit-space error (Eckart-Young on
#      the centred log, exact) against d_p / n, one curve per n;
#  (b) the same targets near the threshold: mean KL(P || softmax) of the best
#      head of size d_p (BFGS fit below the minimal head size, the verified
#      certificate at and above it) against d_p - n: the error vanishes at
#      d_p = n - 1 (exact criterion), one below the paper's d_p = n;
#  (c) structured targets at n = nstruct: relative logit error against d_p,
#      dropping to zero at each family's minimal head size;
#  (d) measured minimal head size rank(Pi log P) against n per family.
# Exact zeros and round-off values (|v| < 1e-17, including tiny negative KL)
# are drawn at the floor 1e-17.
#   build/experiments/lowrank_bottleneck --full --out docs/figures
# renders this script itself; by hand:
#   gnuplot -e "datadir='out/lowrank_bottleneck'; outdir='docs/figures'; nstruct=32; nlist='4 8 16 32 64 128'" experiments/plots/lowrank_bottleneck.gp
if (!exists("datadir")) datadir = 'out/lowrank_bottleneck'
if (!exists("outdir")) outdir = 'docs/figures'
if (!exists("nstruct")) nstruct = 32
if (!exists("nlist")) nlist = '4 8 16 32 64 128'
summary = datadir . '/lowrank_bottleneck_summary.csv'
thresholds = datadir . '/lowrank_thresholds.csv'
set datafile separator ','
set datafile missing ''
floor = 1e-17
atfloor(v) = v > floor ? v : floor
nth(i) = word(nlist, i) + 0
is(fam, nn) = strcol(1) eq fam && $2 == nn
families = 'dirichlet near-permutation banded banded-clean local-smooth lowrank-2 lowrank-n/4'
do for [term in 'pngcairo svg'] {
  if (term eq 'pngcairo') {
    set terminal pngcairo size 1400,1000 enhanced font 'sans,11'
    set output outdir . '/lowrank_bottleneck.png'
  } else {
    set terminal svg size 1400,1000 enhanced font 'sans,11'
    set output outdir . '/lowrank_bottleneck.svg'
  }
  set multiplot layout 2,2
  # (a)
  set title '(a) Dirichlet targets: logit-space error (Eckart-Young, exact)'
  set logscale y
  set format y '10^{%L}'
  set yrange [floor/3:3]
  set xrange [0:1.02]
  set xlabel 'head size d_p / n'
  set ylabel '||{/Symbol P} log P - L_{d_p}||_F / ||{/Symbol P} log P||_F'
  set grid
  set key bottom left opaque box
  plot for [i=1:words(nlist)] summary using ($3/$2):(is('dirichlet', nth(i)) ? atfloor($6) : NaN) \
       with linespoints lw 2 pt 7 ps 0.5 title sprintf('n = %d', nth(i))
  # (b)
  set title '(b) Dirichlet targets near the threshold: probability-space error'
  set xrange [-12.5:0.5]
  set xtics 1
  set xlabel 'd_p - n   (exact threshold d_p = n - 1; paper: d_p = n)'
  set ylabel 'mean KL(P || softmax(rank-d_p logits))'
  set yrange [floor/3:1]
  set arrow 1 from -1, graph 0 to -1, graph 1 nohead lw 2 dt 1 lc rgb '#222222'
  set arrow 2 from 0, graph 0 to 0, graph 1 nohead lw 2 dt 2 lc rgb '#aa0000'
  set label 1 'exact: n - 1' at -1.1, graph 0.93 right
  set label 2 'paper: n' at -0.1, graph 0.85 right tc rgb '#aa0000'
  plot for [i=1:words(nlist)] summary using ($3-$2):(is('dirichlet', nth(i)) && $9 > 0 ? atfloor($10) : NaN) \
       with linespoints lw 2 pt 7 ps 0.7 title sprintf('n = %d', nth(i))
  unset arrow 1
  unset arrow 2
  unset label 1
  unset label 2
  set xtics autofreq
  # (c)
  set title sprintf('(c) structured targets, n = %d: logit-space error', nstruct)
  set xrange [0:nstruct + 1]
  set yrange [floor/3:3]
  set xlabel 'head size d_p'
  set ylabel 'relative logit error'
  set key bottom left opaque box
  plot for [f in families] summary using 3:(is(f, nstruct) ? atfloor($6) : NaN) \
       with linespoints lw 2 pt 7 ps 0.5 title f
  # (d)
  set title '(d) measured minimal head size rank({/Symbol P} log P) (median over targets)'
  set logscale x 2
  set logscale y 2
  set format y '%g'
  set format x '%g'
  set xrange [3:180]
  set yrange [0.7:180]
  set xlabel 'sequence length n'
  set ylabel 'minimal head size'
  set key top left opaque box
  plot thresholds using 2:($8) with lines lw 3 lc rgb '#222222' title 'n - 1 (exact, generic)', \
       thresholds using 2:($9) with lines lw 2 dt 2 lc rgb '#aa0000' title 'n (paper)', \
       for [f in families] thresholds using 2:(strcol(1) eq f ? $5 : NaN) with linespoints lw 1 pt 7 ps 0.8 title f
  unset logscale x
  unset multiplot
  set output
}
