#pragma once
// A table's columns as one list beside the struct that holds its row: each column's SQL name and
// the member that holds its value. A table's INSERT, its binds, its SELECT and its reads then come
// from that one list, so they cannot disagree on a column's place or type. (Each was spelled out
// by hand before: a column added to the INSERT and forgotten in the reads read back as zero.)
//
//   constexpr store::Column<Point> kPointColumns[] = {TIERSIM_COLUMN(Point, target), ...};
//   db.prepare(store::insert_sql<Point>("points", kPointColumns));
//   store::bind_columns<Point>(st, kPointColumns, point);     // positions 1..n
//   store::read_columns<Point>(st, kPointColumns, point, 1);  // result columns 1..n (0: the id)
// (The row type is named: an array does not deduce it through std::span.)
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "store/sqlite.hpp"

namespace tiersim::store {

template <class Row>
struct Column {
  const char* name;  // the SQL column
  // The member of Row that holds the value. bool is stored as INTEGER 0 or 1; an absent
  // std::optional as NULL.
  std::variant<std::string Row::*, double Row::*, std::int64_t Row::*, int Row::*, bool Row::*,
               std::optional<double> Row::*>
      member;
};

// A column named as the member that holds it, so that the two cannot drift apart.
// (Unformatted: clang-format reads #member as a preprocessor directive.)
// clang-format off
#define TIERSIM_COLUMN(Row, member) ::tiersim::store::Column<Row>{#member, &Row::member}
// clang-format on

// "a, b, c": the columns' names in order, for a SELECT or an INSERT.
template <class Row>
std::string column_names(std::span<const Column<Row>> columns) {
  std::string out;
  for (const Column<Row>& c : columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

// "INSERT INTO table (a, b, c) VALUES (?,?,?)".
template <class Row>
std::string insert_sql(std::string_view table, std::span<const Column<Row>> columns) {
  std::string marks;
  for (std::size_t i = 0; i < columns.size(); ++i) marks += i == 0 ? "?" : ",?";
  return "INSERT INTO " + std::string(table) + " (" + column_names(columns) + ") VALUES (" + marks +
         ")";
}

// Binds each column's member of `row` to its parameter, from 1-based position `first` on.
template <class Row>
void bind_columns(Statement& st, std::span<const Column<Row>> columns, const Row& row,
                  int first = 1) {
  int at = first;
  for (const Column<Row>& c : columns) {
    std::visit(
        [&](auto member) {
          const auto& value = row.*member;
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>)
            st.bind(at, value ? 1 : 0);
          else
            st.bind(at, value);
        },
        c.member);
    ++at;
  }
}

// Reads each column's member of `row` from the result column at its place, from 0-based column
// `first` on (a SELECT that lists column_names(columns) after `first` other columns).
template <class Row>
void read_columns(const Statement& st, std::span<const Column<Row>> columns, Row& row,
                  int first = 0) {
  int at = first;
  for (const Column<Row>& c : columns) {
    std::visit(
        [&](auto member) {
          auto& value = row.*member;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string>)
            value = st.column_text(at);
          else if constexpr (std::is_same_v<T, double>)
            value = st.column_double(at);
          else if constexpr (std::is_same_v<T, bool>)
            value = st.column_int(at) != 0;
          else if constexpr (std::is_same_v<T, std::optional<double>>)
            value = st.column_optional_double(at);
          else
            value = static_cast<T>(st.column_int(at));
        },
        c.member);
    ++at;
  }
}

}  // namespace tiersim::store
