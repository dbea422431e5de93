# Softmax bottleneck worked example: errors of an output layer of width d on
# a generated language-model-like distribution (Zipfian marginals, planted
# low-rank context structure plus noise), with and without a per-word bias.
# Left: relative logit-space error (Eckart-Young on the centred log, exact).
# Right: mean KL(P_i || P_hat_i) of the probability-space fit (BFGS, an
# upper bound on the best KL when not converged).
#   build/experiments/softmax_bottleneck_example --full --out out/softmax_bottleneck --figures docs/figures
# renders this itself; by hand:
#   gnuplot -e "datadir='out/softmax_bottleneck'; outdir='docs/figures'" experiments/plots/softmax_bottleneck.gp
# Exact zeros (d >= the required width) are drawn at the floor 1e-17.
if (!exists("datadir")) datadir = 'out/softmax_bottleneck'
if (!exists("outdir")) outdir = 'docs/figures'
data = datadir . '/softmax_bottleneck.csv'
set datafile separator ','
set logscale y
set format y '10^{%L}'
set grid
set key opaque box
set xlabel 'output-layer width d'
atfloor(v) = v > 1e-17 ? v : 1e-17
sel(b, v) = ($1 == b) ? atfloor(v) : NaN
do for [term in 'pngcairo svg'] {
  if (term eq 'pngcairo') {
    set terminal pngcairo size 1200,500 enhanced font 'sans,11'
    set output outdir . '/softmax_bottleneck.png'
  } else {
    set terminal svg size 1200,500 enhanced font 'sans,11'
    set output outdir . '/softmax_bottleneck.svg'
  }
  set multiplot layout 1,2
  set ylabel 'relative logit error ||A - A_d||_F / ||A||_F'
  set key top right opaque box
  plot data skip 1 using 2:(sel(0, $6)) with linespoints lw 2 pt 7 title 'no bias (A = L_0 {/Symbol P}_V)', \
       data skip 1 using 2:(sel(1, $6)) with linespoints lw 2 pt 5 title 'bias (A = {/Symbol P}_N L_0 {/Symbol P}_V)'
  set ylabel 'mean KL(P_i || softmax) of the fit'
  plot data skip 1 using 2:(sel(0, $7)) with linespoints lw 2 pt 7 title 'no bias', \
       data skip 1 using 2:(sel(1, $7)) with linespoints lw 2 pt 5 title 'bias'
  unset multiplot
  set output
}
