# max-seqs-llama-3.1-70b.gp: Max concurrent sequences against context: llama-3.1-70b, engine vllm, tp 8, pp 1, block 16; line colour: GPU; dash: KV dtype; a line stops where no sequence fits, or at max_context 131072
# Written by kvplan; edit it and re-render with 'gnuplot max-seqs-llama-3.1-70b.gp' in this
# directory.  Data: max-seqs-llama-3.1-70b.dat, one block per panel (index N), base units.
set terminal pngcairo noenhanced size 1000,620 font "sans,11"
set output 'max-seqs-llama-3.1-70b.png'
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
set title 'Max concurrent sequences against context: llama-3.1-70b, engine vllm, tp 8, pp 1, block 16'."\n".'line colour: GPU; dash: KV dtype; a line stops where no sequence fits, or at max_context 131072'
set xlabel 'context (tokens per sequence, k = 1024)'
set ylabel 'max concurrent sequences'
set logscale x 2
set logscale y
set format y "%.10g"
set xtics ('256' 256, '512' 512, '1k' 1024, '2k' 2048, '4k' 4096, '8k' 8192, '16k' 16384, '32k' 32768, '64k' 65536, '128k' 131072)
set xrange [222.6086957:150732.8]
set autoscale yfix
set offsets 0, 0, graph 0.06, graph 0.06
set y2range [0:*]
plot 'max-seqs-llama-3.1-70b.dat' index 0 using 1:($4 > 0 ? $4/1 : NaN) with linespoints lw 2 pt 5 ps 0.8 lc 1 dt 1 title 'h100-sxm, KV bf16 (auto)', \
     'max-seqs-llama-3.1-70b.dat' index 0 using 1:($5 > 0 ? $5/1 : NaN) with linespoints lw 2 pt 7 ps 0.8 lc 1 dt 2 title 'h100-sxm, KV fp8', \
     'max-seqs-llama-3.1-70b.dat' index 0 using 1:($6 > 0 ? $6/1 : NaN) with linespoints lw 2 pt 9 ps 0.8 lc 2 dt 1 title 'h200, KV bf16 (auto)', \
     'max-seqs-llama-3.1-70b.dat' index 0 using 1:($7 > 0 ? $7/1 : NaN) with linespoints lw 2 pt 11 ps 0.8 lc 2 dt 2 title 'h200, KV fp8'
