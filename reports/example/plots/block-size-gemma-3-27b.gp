# block-size-gemma-3-27b.gp: Block size: gemma-3-27b on h100-sxm, engine vllm, tp 8, KV bf16, pool 58.97 GiB; workload chat (100,000 requests simulated, max_len 8192)
# Written by kvplan; edit it and re-render with 'gnuplot block-size-gemma-3-27b.gp' in this
# directory.  Data: block-size-gemma-3-27b.dat, one block per panel (index N), base units.
set terminal pngcairo noenhanced size 1700,620 font "sans,11"
set output 'block-size-gemma-3-27b.png'
set encoding utf8
set grid
set linetype 1 lc rgb "#9400d3"
set linetype 2 lc rgb "#008560"
set linetype 3 lc rgb "#0072b2"
set linetype 4 lc rgb "#c85000"
set linetype 5 lc rgb "#8c564b"
set linetype 6 lc rgb "#e7298a"
set linetype 7 lc rgb "#c41a0e"
set linetype 8 lc rgb "#000000"
set multiplot layout 1,2 title 'Block size: gemma-3-27b on h100-sxm, engine vllm, tp 8, KV bf16, pool 58.97 GiB'."\n".'workload chat (100,000 requests simulated, max_len 8192)' font ",12"

# panel 0
unset logscale
unset y2tics
unset y2label
unset arrow
unset label
set autoscale
set format y "% h"
set xtics autofreq norotate
set ytics mirror
set size noratio
set offsets 0, 0, 0, 0
set xlabel offset 0,0
set key below Left reverse height 1
set title '(a) what the pool loses to blocks, % of the pool'
set xlabel 'block size P (tokens per block)'
set ylabel 'share of the KV pool (%, log scale)'
set logscale x 2
set logscale y
set format y "%.10g"
set xtics ('1' 1, '8' 8, '16' 16, '32' 32, '64' 64, '128' 128, '256' 256)
set xrange [0.8695652174:294.4]
set autoscale yfix
set offsets 0, 0, graph 0.06, graph 0.06
set y2range [0:*]
plot 'block-size-gemma-3-27b.dat' index 0 using 1:($4 > 0 ? $4/0.01 : NaN) with linespoints lw 2 pt 5 ps 0.8 lc 1 dt 1 title 'internal waste, paged (0 at P = 1, off the log axis)', \
     'block-size-gemma-3-27b.dat' index 0 using 1:($5 > 0 ? $5/0.01 : NaN) with linespoints lw 2 pt 7 ps 0.8 lc 4 dt 2 title 'metadata (block tables + allocator), paged'

# panel 1
unset logscale
unset y2tics
unset y2label
unset arrow
unset label
set autoscale
set format y "% h"
set xtics autofreq norotate
set ytics mirror
set size noratio
set offsets 0, 0, 0, 0
set xlabel offset 0,0
set key below Left reverse height 1
set title '(b) what the pool holds'
set xlabel 'block size P (tokens per block)'
set ylabel 'live sequences (time average)'
set logscale x 2
set xtics ('1' 1, '8' 8, '16' 16, '32' 32, '64' 64, '128' 128, '256' 256)
set xrange [0.8695652174:294.4]
set arrow from 16, graph 0 to 16, graph 1 nohead dt 3 lw 1.5 lc rgb "gray30"
set yrange [0:*]
set y2range [0:*]
plot 'block-size-gemma-3-27b.dat' index 1 using 1:($4/1) with linespoints lw 2 pt 5 ps 0.8 lc 1 dt 1 title 'live sequences, paged', \
     NaN with lines dt 3 lw 1.5 lc rgb "gray30" title 'recommended: P = 16'
unset multiplot
