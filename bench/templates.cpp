// SPDX-License-Identifier: MIT
/*
 * templates.cpp - the C++ file clang++ compiles in bench/realprogs.sh (issue
 * 31's "clang++ compiling a template-heavy file"): nothing here runs, only
 * its compilation is traced. It instantiates the standard library's
 * containers and algorithms (vector, map, unordered_map, set, deque, list,
 * sort, stable_sort, unique, accumulate, function, shared_ptr) over
 * FULL_TYPES types, variants, optionals and tuples over ALL_TYPES, one
 * std::regex, and two recursive templates (a constant NEST levels deep in
 * pairs, a value RECURSE levels deep): clang's own recursion through them
 * makes its stacks 16 to a few hundred frames deep, and -O2 over the
 * instantiated code makes millions of allocations (each LLVM instruction,
 * use list and SmallVector growth is one).
 *
 * Sizes, clang++ 14 -O2 on this project's 2-core VM: the headers, the
 * regex and one type about 3 s of CPU, each further type of ALL_TYPES
 * about 0.3 s, of FULL_TYPES 0.5 s more; as set (3 of 12), 9 s of CPU and
 * 9.5 million allocations (docs/PERFORMANCE.md, "Real programs").
 */
#include <algorithm>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#ifndef FULL_TYPES
#define FULL_TYPES 3
#endif
#define ALL_TYPES 12
#define NEST 40
#define RECURSE 120

/* A value computed through RECURSE nested instantiations, each needing two. */
template <int N> struct recurse {
	static constexpr long value = recurse<N - 1>::value + recurse<N - 2>::value % 7 + N;
};
template <> struct recurse<1> {
	static constexpr long value = 1;
};
template <> struct recurse<0> {
	static constexpr long value = 0;
};

/* A type D pairs deep: each level is its own instantiation of std::pair. */
template <typename T, int D> struct nest {
	using type = std::pair<typename nest<T, D - 1>::type, T>;
};
template <typename T> struct nest<T, 0> {
	using type = T;
};

template <int I> struct item {
	int a = I;
	double b = I * 0.5;
	std::string s = std::to_string(I);
	bool operator<(const item &o) const { return a < o.a || (a == o.a && s < o.s); }
	bool operator==(const item &o) const { return a == o.a && s == o.s; }
};

template <int I> struct std::hash<item<I>> {
	size_t operator()(const item<I> &x) const { return std::hash<std::string>()(x.s) ^ x.a; }
};

/* Every container and algorithm over item<I>. */
template <int I> long containers(long seed)
{
	using T = item<I>;
	std::vector<T> v(seed % 17 + 3);

	std::sort(v.begin(), v.end());
	std::stable_sort(v.begin(), v.end(), [](const T &x, const T &y) { return y < x; });
	v.erase(std::unique(v.begin(), v.end()), v.end());
	std::map<std::string, T> m;
	std::unordered_map<T, std::vector<T>> um;
	std::set<T> st(v.begin(), v.end());
	std::deque<T> dq(v.begin(), v.end());
	std::list<T> ls(v.begin(), v.end());
	ls.sort();
	for (auto &x : v) {
		m[x.s] = x;
		um[x].push_back(x);
	}
	std::function<long(const T &)> f = [seed](const T &x) { return x.a + seed; };
	auto sp = std::make_shared<std::tuple<T, std::vector<T>, std::map<int, T>>>();
	return std::accumulate(v.begin(), v.end(), 0L,
			       [&f](long acc, const T &x) { return acc + f(x); }) +
	       (long)dq.size() + (long)st.size() + (long)sp.use_count();
}

/* The cheaper instantiations, over every type. */
template <int I> long values(long seed)
{
	using T = item<I>;
	std::variant<T, int, std::string, std::vector<T>> var = T{};
	std::optional<T> o = seed ? std::optional<T>(T{}) : std::nullopt;
	typename nest<T, NEST>::type deep{};
	long r = std::visit([](auto &&x) -> long { return sizeof(x); }, var);

	(void)deep;
	r += o ? o->a : 0;
	if constexpr (I < FULL_TYPES)
		r += containers<I>(seed);
	return r + recurse<RECURSE - ALL_TYPES + I>::value;
}

template <int... Is> long all(long seed, std::integer_sequence<int, Is...>)
{
	std::tuple<item<Is>...> t;
	std::variant<item<Is>...> v;

	return (values<Is>(seed + Is) + ...) + (long)std::tuple_size_v<decltype(t)> +
	       (long)v.index();
}

long run(long seed)
{
	return all(seed, std::make_integer_sequence<int, ALL_TYPES>{});
}

long match(const std::string &text)
{
	std::regex re("([a-z]+)[0-9]*\\s*=\\s*(\\d+)");
	std::smatch sm;

	return std::regex_search(text, sm, re) ? (long)sm.size() : 0;
}
