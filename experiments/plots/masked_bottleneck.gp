# Minimal head size h* of one attention head under a mask against the
# sequence length n, for generic maps (Gaussian logits, masked row softmax;
# docs/theory/masked-attention.md).  One colour per mask:
#   filled points   exact h* (staircase masks; windows and bands where the
#                   confirmed certificate meets the proved lower bound);
#   open points     the proved lower bound, with an error bar up to the
#                   smallest confirmed certificate when there is one
#                   (windows and bands up to n = certmax; beyond it only the
#                   lower bound is computed);
#   dashed lines    the generic formulas: n - 1, floor(n/2),
#                   floor(min(n, w)/2), min(n, w) - 1, max(p - 1, floor(n/2)).
# Points are spread slightly along n so coinciding masks stay visible.
# The structured-heads table (masked_bottleneck_heads.csv) is not drawn.
#   build/experiments/masked_bottleneck --full --out out/masked_bottleneck --figures docs/figures
# renders this itself; by hand:
#   gnuplot -e "datadir='out/masked_bottleneck'; outdir='docs/figures'; certmax=64" experiments/plots/masked_bottleneck.gp
if (!exists("datadir")) datadir = 'out/masked_bottleneck'
if (!exists("outdir")) outdir = 'docs/figures'
if (!exists("certmax")) certmax = 64
data = datadir . '/masked_bottleneck.csv'
set datafile separator ','
masks = 'none causal window:4 window:16 band:4 band:16 prefix:8'
colors = '#222222 #1f77b4 #2ca02c #98df8a #d62728 #ff9896 #9467bd'
nm = words(masks)
stats data using 4 nooutput
nmax = STATS_max
# column 8 lower, 9 upper (empty without a certificate), 18 formula value
is(i) = strcol(1) eq word(masks, i)
hi(dummy) = strlen(strcol(9)) > 0 ? column(9) : column(8)
xs(i) = column(4) * (1.0 + 0.025 * (i - (nm + 1) / 2.0))
exact(i) = is(i) && strcol(7) eq 'exact'
bounds(i) = is(i) && strcol(7) ne 'exact'
do for [term in 'pngcairo svg'] {
  if (term eq 'pngcairo') {
    set terminal pngcairo size 1000,700 enhanced font 'sans,11'
    set output outdir . '/masked_bottleneck.png'
  } else {
    set terminal svg size 1000,700 enhanced font 'sans,11'
    set output outdir . '/masked_bottleneck.svg'
  }
  set title 'Minimal head size of one attention head under a mask (generic maps)'
  set logscale x 2
  set logscale y 2
  set format x '%g'
  set format y '%g'
  set xrange [1.7:nmax * 1.2]
  set yrange [0.8:*]
  set xlabel 'sequence length n'
  set ylabel 'minimal head size h*'
  set grid
  set key top left opaque box
  set arrow 1 from certmax, graph 0 to certmax, graph 1 nohead dt 3 lc rgb '#888888'
  set label 1 sprintf('certificates for windows and bands up to n = %d', certmax) \
      at certmax, graph 0.04 right offset -0.5,0 tc rgb '#666666' font 'sans,9'
  plot for [i=1:nm] data using 4:(is(i) ? column(18) : NaN) \
         with lines dt 2 lw 1.5 lc rgb word(colors, i) title sprintf('%s (generic)', word(masks, i)), \
       for [i=1:nm] data using (xs(i)):(exact(i) ? column(8) : NaN) \
         with points pt 7 ps 0.9 lc rgb word(colors, i) notitle, \
       for [i=1:nm] data using (xs(i)):(bounds(i) ? column(8) : NaN):(column(8)):(hi(0)) \
         with yerrorbars pt 6 ps 0.9 lw 1.2 lc rgb word(colors, i) notitle, \
       keyentry with points pt 7 ps 0.9 lc rgb '#444444' title 'exact h* (measured)', \
       keyentry with yerrorbars pt 6 ps 0.9 lc rgb '#444444' title 'lower bound .. certificate'
  unset arrow 1
  unset label 1
  set output
}
