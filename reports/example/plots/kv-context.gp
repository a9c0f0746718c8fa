# kv-context.gp: KV cache of one sequence against context: tp 1, pp 1, KV auto (serving dtype), exact tokens; each line ends at the model's max_context
# Written by kvplan; edit it and re-render with 'gnuplot kv-context.gp' in this
# directory.  Data: kv-context.dat, one block per panel (index N), base units.
set terminal pngcairo noenhanced size 1000,620 font "sans,11"
set output 'kv-context.png'
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
set title 'KV cache of one sequence against context: tp 1, pp 1, KV auto (serving dtype), exact tokens'."\n".'each line ends at the model''s max_context'
set xlabel 'context (tokens per sequence, k = 1024)'
set ylabel 'KV cache of one sequence on one GPU (GiB)'
set logscale x 2
set logscale y
set format y "%.10g"
set xtics ('256' 256, '512' 512, '1k' 1024, '2k' 2048, '4k' 4096, '8k' 8192, '16k' 16384, '32k' 32768, '64k' 65536, '128k' 131072)
set xrange [222.6086957:150732.8]
set autoscale yfix
set offsets 0, 0, graph 0.06, graph 0.06
set y2range [0:*]
plot 'kv-context.dat' index 0 using 1:($4 > 0 ? $4/1073741824 : NaN) with linespoints lw 2 pt 5 ps 0.8 lc 1 dt 1 title 'llama-3.1-70b (GQA 8/64; 327,680 B/token)', \
     'kv-context.dat' index 0 using 1:($5 > 0 ? $5/1073741824 : NaN) with linespoints lw 2 pt 7 ps 0.8 lc 2 dt 1 title 'gemma-3-27b (GQA 16/32, 10 full + 52 sliding 1024; 507,904 B/token)'
