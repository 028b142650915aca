-- fib(32) by naive recursion: 2,178,309 is printed after 7,049,155 calls.
local function fib(n) if n < 2 then return n else return fib(n - 1) + fib(n - 2) end end
local function main() print(fib(32)) end
main()
