import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Webhooks" };

export default function WebhooksPage() {
  return <NotBuiltYet href="/webhooks" />;
}
