import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Team" };

export default function TeamPage() {
  return <NotBuiltYet href="/team" />;
}
