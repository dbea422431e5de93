# Rank collapse: median relative residual ||X_l - 1 x^T||_F / ||X_l||_F against
# depth (log scale), min..max over seeds as error bars, for the four variants.
#   build/experiments/rank_collapse --full --out out/rank_collapse --figures docs/figures
# renders this itself; by hand:
#   gnuplot -e "datadir='out/rank_collapse'; outdir='docs/figures'" experiments/plots/rank_collapse.gp
# Exact zeros (rows identical to the last bit) are drawn at the floor 1e-17.
if (!exists("datadir")) datadir = 'out/rank_collapse'
if (!exists("outdir")) outdir = 'docs/figures'
data = datadir . '/rank_collapse_summary.csv'
set datafile separator ','
set key autotitle columnhead
set logscale y
set format y '10^{%L}'
set yrange [1e-17:2]
set xlabel 'depth l (layers)'
set ylabel 'relative residual ||X_l - 1 x_l^T||_F / ||X_l||_F'
set grid
set key right center opaque box
atfloor(v) = v > 1e-17 ? v : 1e-17
sel(name, v) = (strcol(1) eq name) ? atfloor(v) : NaN
set terminal pngcairo size 900,600 enhanced font 'sans,11'
set output outdir . '/rank_collapse.png'
plot \
  data using 2:(sel('pure', $3)):(sel('pure', $4)):(sel('pure', $5)) with yerrorlines lw 2 pt 7 title 'pure attention', \
  data using 2:(sel('mlp', $3)):(sel('mlp', $4)):(sel('mlp', $5)) with yerrorlines lw 2 pt 5 title 'attention + MLP, no skip', \
  data using 2:(sel('skip', $3)):(sel('skip', $4)):(sel('skip', $5)) with yerrorlines lw 2 pt 9 title 'attention, skip', \
  data using 2:(sel('skip_mlp', $3)):(sel('skip_mlp', $4)):(sel('skip_mlp', $5)) with yerrorlines lw 2 pt 11 title 'attention + MLP, skip'
set terminal svg size 900,600 enhanced font 'sans,11'
set output outdir . '/rank_collapse.svg'
replot
set output
