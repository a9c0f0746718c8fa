# perf-gemma-3-27b-h100-sxm.gp: Decode roofline and KV offload: gemma-3-27b on h100-sxm, tp 8, pp 1, KV bf16; 3.35 TB/s x 0.80 efficiency, 989 TFLOP/s x 0.60
# Written by kvplan; edit it and re-render with 'gnuplot perf-gemma-3-27b-h100-sxm.gp' in this
# directory.  Data: perf-gemma-3-27b-h100-sxm.dat, one block per panel (index N), base units.
set terminal pngcairo noenhanced size 1700,620 font "sans,11"
set output 'perf-gemma-3-27b-h100-sxm.png'
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
set multiplot layout 1,2 title 'Decode roofline and KV offload: gemma-3-27b on h100-sxm, tp 8, pp 1, KV bf16; 3.35 TB/s x 0.80 efficiency, 989 TFLOP/s x 0.60' font ",12"

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
set title '(a) one decode step, 8k tokens of context each'."\n".'107 sequences fit the KV pool'
set xlabel 'batch (sequences decoding together)'
set ylabel 'time per decode step = per output token (ms)'
set y2label 'throughput (output tokens/s, all sequences)'
set ytics nomirror
set y2tics
set logscale x 2
set xtics ('1' 1, '2' 2, '4' 4, '8' 8, '16' 16, '32' 32, '64' 64, '128' 128, '256' 256, '512' 512)
set xrange [0.8695652174:588.8]
set arrow from 107, graph 0 to 107, graph 1 nohead dt 3 lw 1.5 lc rgb "gray30"
set yrange [0:*]
set y2range [0:*]
plot 'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 <= 107 ? ($4/0.001) : NaN) with linespoints lw 2 pt 5 ps 0.8 lc 1 dt 1 title 'step time', \
     'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 <= 107 ? ($5/0.001) : NaN) with linespoints lw 2 pt 7 ps 0.8 lc 3 dt 2 title 'memory term (weights + KV read)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 <= 107 ? ($6/0.001) : NaN) with linespoints lw 2 pt 9 ps 0.8 lc 4 dt 3 title 'compute term', \
     'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 <= 107 ? ($7/1) : NaN) with linespoints lw 2 pt 11 ps 0.8 lc 2 dt 1 axes x1y2 title 'throughput (right axis)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 >= 64 ? ($4/0.001) : NaN) with linespoints lw 1 pt 4 ps 0.8 lc rgb "gray70" dt 1 notitle, \
     'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 >= 64 ? ($5/0.001) : NaN) with linespoints lw 1 pt 6 ps 0.8 lc rgb "gray70" dt 1 notitle, \
     'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 >= 64 ? ($6/0.001) : NaN) with linespoints lw 1 pt 8 ps 0.8 lc rgb "gray70" dt 1 notitle, \
     'perf-gemma-3-27b-h100-sxm.dat' index 0 using 1:($1 >= 64 ? ($7/1) : NaN) with linespoints lw 1 pt 10 ps 0.8 lc rgb "gray70" dt 1 axes x1y2 notitle, \
     NaN with lines dt 3 lw 1.5 lc rgb "gray30" title '107 sequences fit the pool', \
     NaN with linespoints lw 1 pt 6 ps 0.8 lc rgb "gray70" title 'grey: beyond the pool, cannot run'

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
set title '(b) decode step of 64 sequences, all KV brought over a link'."\n".'each step, layer by layer (transfer overlaps compute)'
set xlabel 'context (tokens per sequence, k = 1024)'
set ylabel 'time per decode step (ms)'
set logscale x 2
set logscale y
set format y "%.10g"
set xtics ('256' 256, '512' 512, '1k' 1024, '2k' 2048, '4k' 4096, '8k' 8192, '16k' 16384, '32k' 32768, '64k' 65536, '128k' 131072)
set xrange [222.6086957:150732.8]
set autoscale yfix
set offsets 0, 0, graph 0.06, graph 0.06
set y2range [0:*]
plot 'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($4 > 0 ? $4/0.001 : NaN) with linespoints lw 2 pt 5 ps 0.8 lc 8 dt 1 title 'KV in GPU memory (where it fits)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($5 > 0 ? $5/0.001 : NaN) with linespoints lw 2 pt 7 ps 0.8 lc 1 dt 1 title 'over pcie3x16 (12.00 GB/s)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($6 > 0 ? $6/0.001 : NaN) with linespoints lw 2 pt 9 ps 0.8 lc 2 dt 1 title 'over pcie4x16 (25.00 GB/s)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($7 > 0 ? $7/0.001 : NaN) with linespoints lw 2 pt 11 ps 0.8 lc 3 dt 1 title 'over pcie5x16 (50.00 GB/s)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($8 > 0 ? $8/0.001 : NaN) with linespoints lw 2 pt 5 ps 0.8 lc 4 dt 1 title 'over pcie6x16 (96.00 GB/s)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($9 > 0 ? $9/0.001 : NaN) with linespoints lw 2 pt 7 ps 0.8 lc 5 dt 1 title 'over nvlink-c2c (375.00 GB/s)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($10 > 0 ? $10/0.001 : NaN) with linespoints lw 2 pt 9 ps 0.8 lc 6 dt 1 title 'over nvme (7.00 GB/s)', \
     'perf-gemma-3-27b-h100-sxm.dat' index 1 using 1:($11 > 0 ? $11/0.001 : NaN) with linespoints lw 2 pt 11 ps 0.8 lc 7 dt 1 title 'over sata (550.00 MB/s)'
unset multiplot
